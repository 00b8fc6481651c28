/**
 * Trust on first use of definitions (tools, prompts, resources, server instructions), per org
 * and server. First sight: pinned, unless the detection engine flags it (then held with no
 * approved hash). Later sights: same hash → nothing; another hash → a rug pull, held until an
 * admin approves the new hash. Every hold is a `tool_poisoning` finding. The state is cached per
 * replica and written through to mcp_definitions.
 *
 * Replicas: every change of a server's pins (a new pin, a hold, an approval) bumps a generation
 * counter in the shared cache (Redis when configured). A replica re-reads the counter at most once
 * a second per server and reloads the pins from the database when it moved, so an approval or a
 * hold made on another replica applies within about a second. Without Redis (memory cache), the
 * counter is per process, so a replica re-reads the pins from the database after
 * `maxAgeMs` (15 s) at the latest.
 */
import { LRUCache } from 'lru-cache';
import type { ToolDefinitionShape } from '../detection/index.ts';
import type { Cache } from '../platform/cache.ts';
import type { Inspection, McpFinding, McpInspector } from './inspection.ts';
import { definitionHash, definitionText, inferCategory, sha256Jcs, type ToolCategory } from './definitions.ts';
import type { DefinitionKind, DefinitionRecord, McpStore } from './store.ts';
import { entryBound } from '../platform/lru.ts';

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

export interface PinningOptions {
  /** How often a replica reads a server's generation counter from the shared cache. */
  readonly checkEveryMs?: number;
  /** Pins older than this are re-read from the database whatever the counter says. */
  readonly maxAgeMs?: number;
  readonly now?: () => number;
}

/** Generation counters live this long after their last change (a missing counter reloads). */
const GENERATION_TTL_MS = 7 * 24 * 3600_000;
/** Servers whose pins a replica keeps in memory (least recently loaded dropped first). */
const MAX_CACHED_SERVERS = 10_000;

interface Loaded {
  readonly entries: Map<string, DefinitionRecord>;
  readonly loadedAt: number;
  generation: string | null;
  checkedAt: number;
}

export function createPinning(store: Pick<McpStore, 'definitions' | 'saveDefinition'>, inspector: McpInspector, shared: Cache, options: PinningOptions = {}) {
  const checkEveryMs = options.checkEveryMs ?? 1_000;
  const maxAgeMs = options.maxAgeMs ?? 15_000;
  const clock = options.now ?? Date.now;
  const cache = new LRUCache<string, Loaded>(entryBound(MAX_CACHED_SERVERS));
  /** Loads in flight per server: concurrent requests share one database read. */
  const loading = new Map<string, Promise<Loaded>>();
  const keyOf = (kind: DefinitionKind, name: string) => `${kind}\u0000${name}`;
  const generationKey = (orgId: string, serverId: string) => `${shared.prefix}mcp:defs:gen:${orgId}:${serverId}`;

  async function read(orgId: string, serverId: string, generation: string | null): Promise<Loaded> {
    const now = clock();
    const entries = new Map((await store.definitions(orgId, serverId)).map((record) => [keyOf(record.kind, record.name), record]));
    const loaded: Loaded = { entries, loadedAt: now, generation, checkedAt: now };
    cache.set(`${orgId}:${serverId}`, loaded);
    return loaded;
  }

  async function load(orgId: string, serverId: string): Promise<Map<string, DefinitionRecord>> {
    const cacheKey = `${orgId}:${serverId}`;
    const now = clock();
    const hit = cache.get(cacheKey);
    if (hit !== undefined && now - hit.checkedAt < checkEveryMs && now - hit.loadedAt < maxAgeMs) return hit.entries;
    const inFlight = loading.get(cacheKey);
    if (inFlight !== undefined) return (await inFlight).entries;
    const run = (async () => {
      // The counter is read BEFORE the pins: a change made in between is seen at the next check.
      const generation = await shared.get(generationKey(orgId, serverId)).catch(() => null);
      const current = cache.get(cacheKey);
      if (current !== undefined && current.generation === generation && clock() - current.loadedAt < maxAgeMs) {
        current.checkedAt = clock();
        return current;
      }
      return read(orgId, serverId, generation);
    })();
    loading.set(cacheKey, run);
    try {
      return (await run).entries;
    } finally {
      loading.delete(cacheKey);
    }
  }

  /** A server's pins changed here: tell the other replicas (bump the counter), drop this replica's copy. */
  async function changed(orgId: string, serverId: string): Promise<void> {
    await shared.incr(generationKey(orgId, serverId), GENERATION_TTL_MS).catch(() => undefined);
    cache.delete(`${orgId}:${serverId}`);
  }

  async function check(context: PinningContext, kind: DefinitionKind, name: string, definition: Record<string, unknown>): Promise<DefinitionVerdict> {
    const entries = await load(context.orgId, context.serverId);
    const hash = kind === 'tool' ? definitionHash(definition) : sha256Jcs(definition);
    const category = kind === 'tool' ? inferCategory(definition, context.categories[name]) : 'none';
    const existing = entries.get(keyOf(kind, name));
    if (existing !== undefined && existing.hash === hash && existing.pending_hash === null) {
      if (kind === 'tool' && existing.category !== category) {
        // Same definition, another category (the registration's overrides were edited): the
        // category is stored again, nothing is rescanned or held.
        const record = { ...existing, category };
        await store.saveDefinition(context.orgId, record);
        entries.set(keyOf(kind, name), record);
        await shared.incr(generationKey(context.orgId, context.serverId), GENERATION_TTL_MS).catch(() => null);
      }
      return { kind, name, hash, category, held: false, flagged: false, reason: 'unchanged', findings: [], isNew: false };
    }
    if (existing !== undefined && existing.pending_hash === hash) {
      return { kind, name, hash, category, held: true, flagged: false, reason: 'awaiting_approval', findings: existing.findings, isNew: false };
    }
    // New or changed: scan what the model would read.
    const text = kind === 'instructions' ? String(definition.instructions ?? '') : definitionText(definition);
    const inspectContext = { orgId: context.orgId, serverId: context.serverId, ...(context.requestId === undefined ? {} : { requestId: context.requestId }) };
    // Tools go to the engine as the structured tool (tool_definition). So do a server's
    // instructions: they are instructions to the model by design, so what matters is whether they
    // are poisoned (hidden actions, secrets, concealment), not that they address the model, which
    // the indirect-injection scan of text (`tool_output`) flags in every instructions text.
    // Prompts and resources are text.
    const inspection =
      kind === 'tool' ? await inspector.tool(toolShape(name, definition), `${name}\n${text}`, inspectContext)
      : kind === 'instructions' ? await inspector.tool({ name: 'instructions', description: text }, text, inspectContext)
      : await inspector.definition(`${name}\n${text}`, inspectContext);
    // Instructions are held only for a confident catalogue finding of a poisoning class (0.5 or
    // more): a classifier's verdict or a weak pattern ("respond with …") on text that is meant
    // to instruct the model is reported (flagged), and the client still reads the instructions.
    const raw = poisonLevel(inspection);
    const level = kind === 'instructions' && raw === 'held' && !inspection.findings.some((finding) => POISON_CATEGORIES.has(finding.category) && finding.confidence >= 0.5 && !finding.id.startsWith('ml.') && !finding.id.startsWith('signal.')) ? 'flagged' : raw;
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
    // Other replicas reload this server's pins (a hold made here must refuse calls there too).
    // This replica keeps its copy with the new record in it: a reload is only needed elsewhere.
    const generation = await shared.incr(generationKey(context.orgId, context.serverId), GENERATION_TTL_MS).catch(() => null);
    const mine = cache.get(`${context.orgId}:${context.serverId}`);
    if (mine !== undefined && mine.entries === entries && generation !== null && (mine.generation ?? '0') === String(generation - 1)) mine.generation = String(generation);
    return { kind, name, hash, category, held, flagged: level === 'flagged', reason, findings, isNew: true };
  }

  return {
    check,
    /** The cached state of one tool (null when never listed through svc). */
    async tool(orgId: string, serverId: string, name: string): Promise<DefinitionRecord | null> {
      return (await load(orgId, serverId)).get(keyOf('tool', name)) ?? null;
    },
    /** After an approval or the server's deletion: every replica reloads the server's pins. */
    changed,
  };
}

export type Pinning = ReturnType<typeof createPinning>;
