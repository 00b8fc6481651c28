/**
 * Trust on first use of definitions (tools, prompts, resources, server instructions), per org
 * and server. First sight: pinned, unless the detection engine flags it (then held with no
 * approved hash). Later sights: same hash → nothing; another hash → a rug pull, held until an
 * admin approves the new hash. Every hold is a `tool_poisoning` finding. The state is cached per
 * replica and written through to mcp_definitions.
 */
import type { ToolDefinitionShape } from '../detection/index.ts';
import type { Inspection, McpFinding, McpInspector } from './inspection.ts';
import { definitionHash, definitionText, inferCategory, sha256Jcs, type ToolCategory } from './definitions.ts';
import type { DefinitionKind, DefinitionRecord, McpStore } from './store.ts';

export interface DefinitionVerdict {
  readonly kind: DefinitionKind;
  readonly name: string;
  readonly hash: string;
  readonly category: ToolCategory;
  /** Held: hidden from lists (policy 'hide') and its calls refused. */
  readonly held: boolean;
  /** Why it is held or flagged. */
  readonly reason: 'first_sight' | 'unchanged' | 'changed' | 'poisoned' | 'changed_and_poisoned' | 'awaiting_approval';
  /** Flagged but not held (alert band): reported as a tool_poisoning finding, still usable. */
  readonly flagged: boolean;
  readonly findings: readonly McpFinding[];
  /** True the first time this state was reached (report once, not on every list). */
  readonly isNew: boolean;
}

export interface PinningContext {
  readonly orgId: string;
  readonly serverId: string;
  readonly categories: Readonly<Record<string, string>>;
  readonly sessionId?: string;
  readonly requestId?: string;
}

/** Findings at or above this confidence, or an engine decision of block, make a definition poisoned. */
const POISON_CATEGORIES = new Set(['tool-poisoning', 'malicious-capability', 'prompt-injection', 'context-poisoning', 'exfiltration', 'agent-impersonation', 'prompt-chaining', 'sleeper-payload', 'system-prompt-extraction', 'jailbreak', 'credential-solicitation']);

/**
 * How a definition's scan is acted on (docs/mcp.md "Poisoned definitions"): 'held' when the
 * engine's decision is block (hidden or its calls refused until approved); 'flagged' when it
 * reaches the alert or challenge band with a catalogue or signal finding of an injection,
 * poisoning or malicious-capability class (a tool_poisoning finding and an alert, the tool stays usable); otherwise null.
 * Holding only at block keeps ordinary tools usable: on the benign corpora the alert band would
 * hide 1.3 % of popular servers' tools, the block band hides 0.2 % (docs/mcp.md "Benchmarks").
 */
export function poisonLevel(inspection: Inspection): 'held' | 'flagged' | null {
  if (inspection.decision === 'block') return 'held';
  if (inspection.decision === 'allow' || inspection.decision === 'log') return null;
  return inspection.findings.some((finding) => POISON_CATEGORIES.has(finding.category) && finding.confidence > 0 && !finding.id.startsWith('ml.')) ? 'flagged' : null;
}

/**
 * The tool as the engine's tool_definition kind takes it. The title is model-visible text the
 * engine's shape has no field for, so it is put before the description.
 */
export function toolShape(name: string, definition: Readonly<Record<string, unknown>>): ToolDefinitionShape {
  const description = [definition.title, definition.description].filter((part): part is string => typeof part === 'string' && part !== '').join('\n');
  return {
    name,
    ...(description === '' ? {} : { description }),
    ...(definition.inputSchema === undefined ? {} : { inputSchema: definition.inputSchema }),
    ...(definition.annotations === undefined ? {} : { annotations: definition.annotations }),
  };
}

export function createPinning(store: McpStore, inspector: McpInspector) {
  const cache = new Map<string, Map<string, DefinitionRecord>>();
  const keyOf = (kind: DefinitionKind, name: string) => `${kind}\u0000${name}`;

  async function load(orgId: string, serverId: string): Promise<Map<string, DefinitionRecord>> {
    const cacheKey = `${orgId}:${serverId}`;
    let entries = cache.get(cacheKey);
    if (entries === undefined) {
      entries = new Map((await store.definitions(orgId, serverId)).map((record) => [keyOf(record.kind, record.name), record]));
      cache.set(cacheKey, entries);
    }
    return entries;
  }

  async function check(context: PinningContext, kind: DefinitionKind, name: string, definition: Record<string, unknown>): Promise<DefinitionVerdict> {
    const entries = await load(context.orgId, context.serverId);
    const hash = kind === 'tool' ? definitionHash(definition) : sha256Jcs(definition);
    const category = kind === 'tool' ? inferCategory(definition, context.categories[name]) : 'none';
    const existing = entries.get(keyOf(kind, name));
    if (existing !== undefined && existing.hash === hash && existing.pending_hash === null) {
      return { kind, name, hash, category, held: false, flagged: false, reason: 'unchanged', findings: [], isNew: false };
    }
    if (existing !== undefined && existing.pending_hash === hash) {
      return { kind, name, hash, category, held: true, flagged: false, reason: 'awaiting_approval', findings: existing.findings, isNew: false };
    }
    // New or changed: scan what the model would read.
    const text = kind === 'instructions' ? String(definition.instructions ?? '') : definitionText(definition);
    const inspectContext = { orgId: context.orgId, serverId: context.serverId, ...(context.requestId === undefined ? {} : { requestId: context.requestId }) };
    // Tools go to the engine as the structured tool (tool_definition); the rest is text.
    const inspection = kind === 'tool' ? await inspector.tool(toolShape(name, definition), `${name}\n${text}`, inspectContext) : await inspector.definition(`${name}\n${text}`, inspectContext);
    const level = poisonLevel(inspection);
    const poisoned = level === 'held';
    const changed = existing !== undefined && existing.hash !== null && existing.hash !== hash;
    // Prompts and resources are pinned and reported but not held (their text is scanned when read).
    const holdable = kind === 'tool' || kind === 'instructions';
    const held = holdable && (changed || poisoned || (existing !== undefined && existing.hash === null));
    const reason: DefinitionVerdict['reason'] = changed ? (poisoned ? 'changed_and_poisoned' : 'changed') : poisoned ? 'poisoned' : 'first_sight';
    const findings: McpFinding[] = [...(level === null ? [] : inspection.findings)];
    if (changed) findings.unshift({ id: 'mcp.definition-changed', name: 'Definition changed since it was pinned (rug pull)', category: 'tool-poisoning', confidence: 0.7 });
    const record: Omit<DefinitionRecord, 'first_seen_at' | 'updated_at'> = held
      ? { server_id: context.serverId, kind, name, hash: existing?.hash ?? null, pending_hash: hash, pending_definition: definition, pending_reason: reason, findings, category }
      : { server_id: context.serverId, kind, name, hash, pending_hash: null, pending_definition: null, pending_reason: null, findings, category };
    await store.saveDefinition(context.orgId, record);
    const now = new Date().toISOString();
    entries.set(keyOf(kind, name), { ...record, first_seen_at: existing?.first_seen_at ?? now, updated_at: now });
    return { kind, name, hash, category, held, flagged: level === 'flagged', reason, findings, isNew: true };
  }

  return {
    check,
    /** The cached state of one tool (null when never listed through svc). */
    async tool(orgId: string, serverId: string, name: string): Promise<DefinitionRecord | null> {
      return (await load(orgId, serverId)).get(keyOf('tool', name)) ?? null;
    },
    /** Drops the replica's cache of a server (after an approval, or the server's deletion). */
    forget(orgId: string, serverId: string): void {
      cache.delete(`${orgId}:${serverId}`);
    },
  };
}

export type Pinning = ReturnType<typeof createPinning>;
