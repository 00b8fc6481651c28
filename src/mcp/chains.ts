/**
 * Compound chains (spec: Compound chains): atomic facts observed in one MCP session are kept for
 * a 5-minute sliding window and a compound finding is emitted when one of the five named
 * patterns is complete. The window lives in the cache (Redis when configured, so replicas share
 * it; memory otherwise). Each pattern fires once per session per window, carrying the facts that
 * composed it.
 *
 * No lost facts under concurrency: observations are APPENDED to the session's window in one atomic
 * step that also returns the whole window (a Lua script on Redis; a synchronous update of the
 * memory store otherwise), never read, modified and written back. Whichever call appends the last
 * missing fact — on any replica — sees all of them; "fires once" is a set-if-absent marker per
 * pattern and window, so two replicas completing the same chain at once report it once.
 */
import type { Cache, MemoryStore } from '../platform/cache.ts';

export const CHAIN_WINDOW_MS = 5 * 60_000;
const MAX_FACTS = 200;

/** Atomic facts the proxy derives from calls, results and definitions. */
export type Fact =
  | 'injection' // injection susceptibility: injected content or instructions reached the session
  | 'network' // outbound network: a network_access tool was called
  | 'filesystem' // filesystem access: a read_files / write_files tool was called
  | 'secret_read' // secrets or credential stores were read
  | 'egress' // outbound egress (network tool, or a URL leaving in arguments)
  | 'solicit' // a tool description solicits credentials
  | 'encoded' // an encoded payload
  | 'shell' // shell execution or eval
  | 'egress_host'; // tunnel, paste or webhook host, or a raw IP

export interface Observation {
  readonly fact: Fact;
  /** The atomic finding (pattern or signal id, or `category:<name>`). */
  readonly finding: string;
  readonly tool?: string;
  readonly hop?: string;
  /** One content item (a definition, the arguments of one call, one result). */
  readonly item?: string;
}

interface Stored extends Observation {
  readonly at: number;
}

export const COMPOUND_PATTERNS = {
  'compound.lethal-trifecta': { name: 'Lethal Trifecta', needs: ['injection', 'network', 'filesystem'] },
  'compound.credential-exfiltration': { name: 'Credential Exfiltration Chain', needs: ['secret_read', 'egress'] },
  'compound.phishing-tool': { name: 'Phishing Tool', needs: ['solicit', 'injection'] },
  'compound.obfuscated-execution': { name: 'Obfuscated Execution', needs: ['encoded', 'shell'] },
  'compound.shadow-egress': { name: 'Shadow Egress', needs: ['egress_host', 'encoded'], sameItem: true },
} as const satisfies Record<string, { name: string; needs: readonly Fact[]; sameItem?: boolean }>;

export type CompoundId = keyof typeof COMPOUND_PATTERNS;

export interface CompoundFinding {
  readonly id: CompoundId;
  readonly name: string;
  readonly composed_of: readonly { fact: Fact; finding: string; tool: string | null; hop: string | null; at: string }[];
}

export interface ChainCorrelator {
  /** Adds the observations and returns the compound findings they complete (each once per window). */
  observe(orgId: string, sessionId: string, observations: readonly Observation[], now?: number): Promise<CompoundFinding[]>;
}

/** RPUSH the facts, keep the newest MAX_FACTS, renew the expiry, return the window: one atomic step. */
const APPEND_SCRIPT = `
for index = 3, #ARGV do redis.call('RPUSH', KEYS[1], ARGV[index]) end
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[2]), -1)
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return redis.call('LRANGE', KEYS[1], 0, -1)`;

export function createChainCorrelator(cache: Cache, windowMs = CHAIN_WINDOW_MS): ChainCorrelator {
  async function append(key: string, facts: readonly Stored[]): Promise<Stored[]> {
    const encoded = facts.map((fact) => JSON.stringify(fact));
    const redis = cache.redis();
    if (redis !== null) {
      try {
        const window = (await redis.eval(APPEND_SCRIPT, 1, key, windowMs, MAX_FACTS, ...encoded)) as string[];
        return window.map(parseFact).filter((fact): fact is Stored => fact !== null);
      } catch {
        // Redis failed mid-call: the memory store serves, as every cache operation falls back.
      }
    }
    return appendInMemory(cache.memory, key, facts, windowMs);
  }

  return {
    async observe(orgId, sessionId, observations, now = Date.now()) {
      if (observations.length === 0) return [];
      const base = `${cache.prefix}mcp:chain:${orgId}:${sessionId.slice(0, 256)}`;
      const window = await append(`${base}:facts`, observations.map((observation) => ({ ...observation, at: now })));
      const recent = window.filter((fact) => now - fact.at < windowMs);
      const found: CompoundFinding[] = [];
      for (const [id, pattern] of Object.entries(COMPOUND_PATTERNS) as [CompoundId, (typeof COMPOUND_PATTERNS)[CompoundId]][]) {
        const composed = match(recent, pattern.needs, 'sameItem' in pattern && pattern.sameItem);
        if (composed === null) continue;
        // Once per session and window, whichever replica or call completes it first.
        if (!(await cache.setIfAbsent(`${base}:fired:${id}`, String(now), windowMs).catch(() => false))) continue;
        found.push({
          id,
          name: pattern.name,
          composed_of: composed.map((fact) => ({ fact: fact.fact, finding: fact.finding, tool: fact.tool ?? null, hop: fact.hop ?? null, at: new Date(fact.at).toISOString() })),
        });
      }
      return found;
    },
  };
}

/** The memory path of append: synchronous, so atomic within the process. */
function appendInMemory(memory: MemoryStore, key: string, facts: readonly Stored[], windowMs: number): Stored[] {
  const window = [...parseWindow(memory.get(key)), ...facts].slice(-MAX_FACTS);
  memory.set(key, JSON.stringify(window), windowMs);
  return window;
}

function parseFact(raw: string): Stored | null {
  try {
    const fact = JSON.parse(raw) as Stored;
    return typeof fact === 'object' && fact !== null && typeof fact.fact === 'string' && typeof fact.at === 'number' ? fact : null;
  } catch {
    return null;
  }
}

function parseWindow(raw: string | null): Stored[] {
  if (raw === null) return [];
  try {
    const parsed = JSON.parse(raw) as unknown;
    return Array.isArray(parsed) ? (parsed as Stored[]) : [];
  } catch {
    return [];
  }
}

function match(facts: readonly Stored[], needs: readonly Fact[], sameItem: boolean): Stored[] | null {
  if (sameItem) {
    const items = new Set(facts.map((fact) => fact.item).filter((item): item is string => item !== undefined));
    for (const item of items) {
      const inItem = facts.filter((fact) => fact.item === item);
      const composed = needs.map((need) => inItem.find((fact) => fact.fact === need));
      if (composed.every((fact) => fact !== undefined)) return composed as Stored[];
    }
    return null;
  }
  const composed = needs.map((need) => [...facts].reverse().find((fact) => fact.fact === need));
  return composed.every((fact) => fact !== undefined) ? (composed as Stored[]) : null;
}
