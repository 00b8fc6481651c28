/**
 * T5 subject profiles — the stateful edge of `profile.ts`, for the AI gateway's completions and
 * the MCP proxy's tool calls: loads a subject's profile from the cache, advances it by one
 * observation and stores it back, through the same state store as the endpoint/IP baselines
 * (`store.ts`: Redis shared by replicas with a compare-and-set, bounded in-process LRUs
 * otherwise). A session's last step is kept beside (30 minutes) so that the transition from it
 * joins the subject's profile as a `sequence` value.
 *
 * Subjects and sessions are keyed by hash (they carry org, key and session ids); profiles expire
 * after 7 days without traffic, as endpoint baselines do.
 */
import { LRUCache } from 'lru-cache';
import type { Cache } from '../../platform/cache.ts';
import { sha256Hex } from '../../platform/crypto.ts';
import type { BehaviourResult } from './baseline.ts';
import { combineAnomalies } from './model.ts';
import type { ProfileObservation, ProfileOptions, ProfileState } from './profile.ts';
import { DEFAULT_PROFILE_OPTIONS, SEQUENCE_FEATURE, emptyProfile, stepProfile } from './profile.ts';
import { createStateStore } from './store.ts';
import { entryBound } from '../../platform/lru.ts';

const PROFILE_TTL_MS = 7 * 24 * 3_600_000;
const SESSION_TTL_MS = 30 * 60_000;
const MAX_KEY_PART = 512;

export interface ProfileEvent extends Omit<ProfileObservation, 'at'> {
  /** Who the observation is attributed to (any string; hashed before use). */
  subject: string;
  /** Epoch milliseconds (default: now). */
  at?: number;
  /** A session and this observation's step in it: the transition from the session's previous step is observed as a `sequence` value. */
  session?: { id: string; step: string };
}

export interface ProfileBaseline {
  observe(event: ProfileEvent): Promise<BehaviourResult>;
}

export interface ProfileBaselineOptions extends Partial<ProfileOptions> {
  /** Key namespace under the cache prefix (default 't5-profile'). */
  namespace?: string;
  /** Profiles kept in process without Redis (sessions as many), default 20,000. */
  memoryEntries?: number;
}

interface SessionState {
  version: 1;
  last: string | null;
}

export function createProfileBaseline(cache: Cache, options: ProfileBaselineOptions = {}): ProfileBaseline {
  const { namespace = 't5-profile', memoryEntries = 20_000, ...overrides } = options;
  const settings: ProfileOptions = { ...DEFAULT_PROFILE_OPTIONS, ...overrides };
  const store = createStateStore(cache, namespace, {
    subject: { ttlMs: PROFILE_TTL_MS, memoryEntries },
    session: { ttlMs: SESSION_TTL_MS, memoryEntries },
  });
  // Subjects repeat: their hash is remembered (bounded like the profiles).
  const hashes = new LRUCache<string, string>(entryBound(Math.max(1, memoryEntries)));
  const hashOf = (text: string): string => {
    let hash = hashes.get(text);
    if (hash === undefined) {
      hash = sha256Hex(`t5-subject:${text.slice(0, MAX_KEY_PART)}`).slice(0, 32);
      hashes.set(text, hash);
    }
    return hash;
  };
  return {
    async observe(event: ProfileEvent): Promise<BehaviourResult> {
      const at = event.at ?? Date.now();
      let values = event.values;
      if (event.session !== undefined) {
        const step = event.session.step.slice(0, 100);
        const update = store.update<SessionState, string | null>('session', hashOf(`${event.subject}\u0000${event.session.id}`), () => ({ version: 1, last: null }), (state) => {
          const previous = state.last;
          state.last = step;
          return previous;
        });
        const previous = update instanceof Promise ? await update : update;
        if (previous !== null) values = { ...values, [SEQUENCE_FEATURE]: [`${previous} → ${step}`] };
      }
      const observation: ProfileObservation = { at, ...(event.sizes === undefined ? {} : { sizes: event.sizes }), ...(values === undefined ? {} : { values }), ...(event.label === undefined ? {} : { label: event.label }) };
      const update = store.update<ProfileState, ReturnType<typeof stepProfile>>('subject', hashOf(event.subject), () => emptyProfile(Math.floor(at / settings.bucketMs)), (state) => stepProfile(state, observation, settings));
      const anomalies = update instanceof Promise ? await update : update;
      return { score: combineAnomalies(anomalies), anomalies };
    },
  };
}
