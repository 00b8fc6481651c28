/**
 * Compound chains (spec: Compound chains): atomic facts observed in one MCP session are kept for
 * a 5-minute sliding window and a compound finding is emitted when one of the five named
 * patterns is complete. The window lives in the cache (Redis when configured, so replicas share
 * it; memory otherwise). Each pattern fires once per session per window, carrying the facts that
 * composed it.
 */
import type { Cache } from '../platform/cache.ts';

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

export function createChainCorrelator(cache: Cache, windowMs = CHAIN_WINDOW_MS): ChainCorrelator {
  // Per-key serialization inside one replica (read-modify-write of the window).
  const locks = new Map<string, Promise<unknown>>();
  return {
    async observe(orgId, sessionId, observations, now = Date.now()) {
      if (observations.length === 0) return [];
      const key = `mcp:chain:${orgId}:${sessionId}`;
      const previous = locks.get(key) ?? Promise.resolve();
      const run = previous.then(async () => {
        const raw = await cache.get(key).catch(() => null);
        const state = parseState(raw);
        const facts = state.facts.filter((fact) => now - fact.at < windowMs);
        for (const observation of observations) facts.push({ ...observation, at: now });
        const recent = facts.slice(-MAX_FACTS);
        const fired = Object.fromEntries(Object.entries(state.fired).filter(([, at]) => now - at < windowMs));
        const found: CompoundFinding[] = [];
        for (const [id, pattern] of Object.entries(COMPOUND_PATTERNS) as [CompoundId, (typeof COMPOUND_PATTERNS)[CompoundId]][]) {
          if (fired[id] !== undefined) continue;
          const composed = match(recent, pattern.needs, 'sameItem' in pattern && pattern.sameItem);
          if (composed === null) continue;
          fired[id] = now;
          found.push({
            id,
            name: pattern.name,
            composed_of: composed.map((fact) => ({ fact: fact.fact, finding: fact.finding, tool: fact.tool ?? null, hop: fact.hop ?? null, at: new Date(fact.at).toISOString() })),
          });
        }
        await cache.set(key, JSON.stringify({ facts: recent, fired }), windowMs).catch(() => undefined);
        return found;
      });
      const settled = run.catch(() => undefined);
      locks.set(key, settled);
      void settled.then(() => {
        if (locks.get(key) === settled) locks.delete(key);
      });
      return run;
    },
  };
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

function parseState(raw: string | null): { facts: Stored[]; fired: Record<string, number> } {
  if (raw === null) return { facts: [], fired: {} };
  try {
    const parsed = JSON.parse(raw) as { facts?: Stored[]; fired?: Record<string, number> };
    return { facts: Array.isArray(parsed.facts) ? parsed.facts : [], fired: parsed.fired ?? {} };
  } catch {
    return { facts: [], fired: {} };
  }
}
