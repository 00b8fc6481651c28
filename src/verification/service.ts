/**
 * The verification core: per-org policy (cached), the completion verifier the gateway calls
 * (JSON answers and streams), the guard API's verify, and the provenance writer. No Fastify.
 *
 * Order for a JSON answer: policy (in-process cache) → layers (verify.ts) → action: annotate
 * (verification attached), redact (spans replaced), retry (the same request once more on the
 * next provider of the org's route, verified again; if that one fails too, or there is no next
 * provider, the answer is blocked), block (VERIFICATION_BLOCKED, 422, verdict in details) →
 * provenance record queued (written after the response with its audit entry).
 */
import { LRUCache } from 'lru-cache';
import { AI_HEADERS, type CompletionBody, type CompletionVerifier, type StreamVerifier, type VerifierContext } from '../gateway/index.ts';
import type { AuditLog } from '../audit/index.ts';
import type { Database } from '../platform/db/index.ts';
import { noWithin, type WithinWrite } from '../platform/db/within.ts';
import { SvcError } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';
import type { Outbox } from '../platform/outbox.ts';
import { recordedAt } from '../platform/time.ts';
import { sha256Hex } from './integrity.ts';
import { DEFAULT_POLICY, policyView, resolvePolicy, type InactiveRule, type PolicyBody, type ResolvedPolicy } from './policy.ts';
import { createProvenanceWriter, type ProvenanceRecord, type ProvenanceWriter } from './provenance.ts';
import { createStreamGuard } from './stream-guard.ts';
import { failed, inputOf, redactContent, runVerification, verifyEnvelope, type GroundingTiers, type RequestView } from './verify.ts';
import { LAYER_NAMES, type SourceInput, type Verification, type VerifyInput } from './types.ts';
import { entryBound } from '../platform/lru.ts';

export const POLICY_CACHE_MS = 5_000;

export interface VerificationDeps {
  db: Database;
  logger: Logger;
  audit: AuditLog;
  /** Where provenance records go while the database is unavailable (platform/outbox.ts). */
  outbox?: Outbox;
  /** Optional grounding tiers 2 and 3 (none by default). */
  tiers?: GroundingTiers;
  provenance?: { flushMs?: number; batch?: number; maxBacklog?: number };
}

export interface PolicyStore {
  get(orgId: string): Promise<ResolvedPolicy>;
  /** The policy, when it was saved, and its inactive rules (stored patterns today's rule refuses; skipped). */
  view(orgId: string): Promise<{ policy: ReturnType<typeof policyView>; updated_at: string | null; inactive_rules: InactiveRule[] }>;
  /**
   * Validates (throws PolicyError) and saves; returns the resolved view. `within` runs in the
   * save's transaction (the audit entry): a failure of it stores nothing.
   */
  put(orgId: string, body: PolicyBody, within?: WithinWrite<void>): Promise<ReturnType<typeof policyView>>;
  /** Removes the org's policy (defaults apply); `within` as for `put`. */
  reset(orgId: string, within?: WithinWrite<void>): Promise<void>;
}

export interface GuardRequest {
  response: string;
  sources?: SourceInput[];
  question?: string;
  schema?: Record<string, unknown>;
  tools?: VerifyInput['tools'];
  tool_calls?: VerifyInput['toolCalls'];
  system_prompt?: string;
  finish_reason?: string;
  policy?: PolicyBody;
}

export interface VerificationCore {
  policies: PolicyStore;
  provenance: ProvenanceWriter;
  verifier: CompletionVerifier;
  /** POST /api/v1/verify: the verification object (plus redacted content when redacting), no model call. */
  guard(orgId: string, request: GuardRequest): Promise<Verification & { redacted_content?: string }>;
  close(): Promise<void>;
}

function createPolicyStore(db: Database, logger: Logger): PolicyStore {
  const cached = new LRUCache<string, { value: ResolvedPolicy; body: PolicyBody | null; updatedAt: string | null; expiresAt: number }>(entryBound(10_000));
  // org id + updated_at of stored policies whose inactive rules were already logged (once per org/policy version).
  const warned = new LRUCache<string, true>(entryBound(10_000));
  // Resolved stored policies by org and body: an unchanged row read again is not compiled again.
  const resolved = new LRUCache<string, ResolvedPolicy>(entryBound(1_000));
  const load = async (orgId: string) => {
    const hit = cached.get(orgId);
    const now = Date.now();
    if (hit !== undefined && hit.expiresAt > now) return hit;
    const result = await db.withOrg(orgId, (tx) => tx.query<{ policy: PolicyBody; updated_at: Date }>('SELECT policy, updated_at FROM verification_policies WHERE org_id = $1', [orgId]));
    const row = result.rows[0];
    let value = DEFAULT_POLICY;
    const updatedAt = row === undefined ? null : new Date(row.updated_at).toISOString();
    if (row !== undefined) {
      try {
        // A stored pattern refused by today's rule is skipped (never compiled); the rest applies.
        const version = `${orgId}:${sha256Hex(JSON.stringify(row.policy))}`;
        value = resolved.get(version) ?? resolvePolicy(row.policy, { refusedRules: 'skip' });
        resolved.set(version, value);
      } catch (error) {
        logger.error({ err: error, org_id: orgId }, 'stored verification policy no longer resolves; defaults apply');
      }
      const key = `${orgId}@${updatedAt}`;
      if (value.compiled.inactive.length > 0 && !warned.has(key)) {
        warned.set(key, true);
        logger.warn({ org_id: orgId, policy_updated_at: updatedAt, inactive_rules: value.compiled.inactive.map((rule) => ({ rule: rule.rule, reason: rule.inactive_reason })) }, 'stored verification policy has rules that are now refused; they are skipped');
      }
    }
    const entry = { value, body: row?.policy ?? null, updatedAt, expiresAt: now + POLICY_CACHE_MS };
    cached.set(orgId, entry);
    return entry;
  };
  return {
    async get(orgId) {
      return (await load(orgId)).value;
    },
    async view(orgId) {
      const entry = await load(orgId);
      return { policy: policyView(entry.value), updated_at: entry.updatedAt, inactive_rules: entry.value.compiled.inactive };
    },
    async put(orgId, body, within = noWithin) {
      const resolved = resolvePolicy(body);
      await db.withOrg(orgId, async (tx) => {
        await tx.query(
          `INSERT INTO verification_policies (org_id, policy, updated_at) VALUES ($1, $2::jsonb, now())
           ON CONFLICT (org_id) DO UPDATE SET policy = EXCLUDED.policy, updated_at = now()`,
          [orgId, JSON.stringify(body)],
        );
        await within(tx, undefined);
      });
      cached.delete(orgId);
      return policyView(resolved);
    },
    async reset(orgId, within = noWithin) {
      await db.withOrg(orgId, async (tx) => {
        await tx.query('DELETE FROM verification_policies WHERE org_id = $1', [orgId]);
        await within(tx, undefined);
      });
      cached.delete(orgId);
    },
  };
}

function requestView(body: CompletionBody): RequestView {
  return body as unknown as RequestView;
}

function sourcesOf(body: CompletionBody): ProvenanceRecord['sources'] {
  const sources = (body.sources ?? []) as SourceInput[];
  return sources.map((source, index) => {
    if (typeof source === 'string') return { index, sha256: sha256Hex(source) };
    const entry: ProvenanceRecord['sources'][number] = { index, sha256: sha256Hex(source.content) };
    if (typeof source.id === 'string') entry.id = source.id;
    if (typeof source.title === 'string') entry.title = source.title;
    if (typeof source.url === 'string') entry.url = source.url;
    return entry;
  });
}

function checksOf(verification: Verification | null): ProvenanceRecord['checks'] {
  const checks: ProvenanceRecord['checks'] = {};
  if (verification === null) return checks;
  for (const name of LAYER_NAMES) if (verification.layers[name].verdict !== 'skipped') checks[name] = verification.layers[name].verdict;
  return checks;
}

function failedLayers(verification: Verification) {
  return LAYER_NAMES.filter((name) => failed(verification.layers[name]));
}

export function createVerification(deps: VerificationDeps): VerificationCore {
  const policies = createPolicyStore(deps.db, deps.logger);
  const provenance = createProvenanceWriter(deps, deps.provenance);
  const tiers = deps.tiers ?? {};
  const riskClass = AI_HEADERS['X-AI-Risk-Class'];

  const record = (context: VerifierContext, outcome: { content: string; delivered: boolean; provider: string; model: string; streamed: boolean; verification: Verification | null; retriedFrom?: string }) => {
    provenance.record(context.orgId, {
      requestId: context.requestId,
      contentHash: outcome.verification?.content_sha256 ?? sha256Hex(outcome.content),
      delivered: outcome.delivered,
      provider: outcome.provider,
      model: outcome.model,
      streamed: outcome.streamed,
      sources: sourcesOf(context.body),
      checks: checksOf(outcome.verification),
      passed: outcome.verification?.passed ?? null,
      action: outcome.verification?.action ?? null,
      retriedFrom: outcome.retriedFrom ?? null,
      riskClass,
      sb942ManifestPresent: false,
      // Stamped where the record is built (not copied in the writer to add it): written later from the spool, it keeps this time as created_at.
      recordedAt: recordedAt(),
    });
  };

  /**
   * The org's policy for a completion; if it cannot be read (database unavailable) the last
   * cached value is gone too, so the defaults apply and the error is logged — an answer already
   * paid for upstream is not turned into a 5xx by a policy lookup.
   */
  const policyFor = async (context: VerifierContext): Promise<ResolvedPolicy> => {
    try {
      return await policies.get(context.orgId);
    } catch (error) {
      deps.logger.error({ err: error, request_id: context.requestId }, 'verification policy unavailable; defaults apply');
      return DEFAULT_POLICY;
    }
  };

  const blocked = (verification: Verification) => new SvcError('VERIFICATION_BLOCKED', { details: { verification } });

  const verifier: CompletionVerifier = {
    async completion(context, envelope, retry) {
      const policy = await policyFor(context);
      const streamed = false;
      if (!policy.enabled) {
        record(context, { content: envelope.content, delivered: true, provider: envelope.provider, model: envelope.model, streamed, verification: null });
        return envelope;
      }
      const view = requestView(context.body);
      const first = (await verifyEnvelope(envelope, view, policy, tiers)).verification;
      if (first.action === 'block') {
        record(context, { content: envelope.content, delivered: false, provider: envelope.provider, model: envelope.model, streamed, verification: first });
        throw blocked(first);
      }
      if (first.action !== 'retry') {
        record(context, { content: envelope.content, delivered: true, provider: envelope.provider, model: envelope.model, streamed, verification: first });
        return envelope;
      }
      const summary = { passed: false, failed_layers: failedLayers(first) };
      if (retry === null) {
        first.retry = { from_provider: envelope.provider, to_provider: null, first: summary };
        record(context, { content: envelope.content, delivered: false, provider: envelope.provider, model: envelope.model, streamed, verification: first });
        throw blocked(first);
      }
      let second;
      try {
        second = await retry.run();
      } catch (error) {
        first.retry = { from_provider: envelope.provider, to_provider: retry.provider, first: summary };
        record(context, { content: envelope.content, delivered: false, provider: envelope.provider, model: envelope.model, streamed, verification: first });
        // The response filter blocked the retried answer: that verdict stands (THREAT_BLOCKED).
        if (error instanceof SvcError && error.code === 'THREAT_BLOCKED') throw error;
        deps.logger.warn({ err: error, request_id: context.requestId }, 'verification retry on the next provider failed');
        throw blocked(first);
      }
      const again = (await verifyEnvelope(second, view, policy, tiers)).verification;
      again.retry = { from_provider: envelope.provider, to_provider: second.provider, first: summary };
      const deliver = again.action !== 'retry' && again.action !== 'block';
      if (!deliver) again.action = 'block';
      record(context, { content: second.content, delivered: deliver, provider: second.provider, model: second.model, streamed, verification: again, retriedFrom: envelope.provider });
      if (!deliver) throw blocked(again);
      return second;
    },

    async stream(context): Promise<StreamVerifier | null> {
      const policy = await policyFor(context);
      const base = inputOf(requestView(context.body), { content: '', finish_reason: null });
      const { content: _content, finishReason: _finish, ...rest } = base;
      const guard = policy.enabled ? createStreamGuard(rest, policy, tiers) : null;
      let ended = false;
      let text = '';
      return {
        push(delta) {
          text += delta;
          if (guard === null) return { release: delta, stop: null };
          const result = guard.push(delta);
          return { release: result.release, stop: result.stop === null ? null : { code: 'VERIFICATION_BLOCKED', verification: result.stop.verification as unknown as Record<string, unknown> } };
        },
        async end(outcome) {
          if (ended) return { release: '', stop: null, verification: null };
          ended = true;
          if (guard === null) {
            record(context, { content: text, delivered: outcome.cut !== true, provider: outcome.provider, model: outcome.model, streamed: true, verification: null });
            return { release: '', stop: null, verification: null };
          }
          const result = await guard.end(outcome);
          record(context, { content: text, delivered: result.stop === null, provider: outcome.provider, model: outcome.model, streamed: true, verification: result.verification });
          const verification = result.verification as unknown as Record<string, unknown>;
          return { release: result.release, stop: result.stop === null ? null : { code: 'VERIFICATION_BLOCKED', verification }, verification };
        },
      };
    },
  };

  return {
    policies,
    provenance,
    verifier,
    async guard(orgId, request) {
      const stored = await policies.get(orgId);
      let policy = stored;
      if (request.policy !== undefined) {
        // The request's own rules are refused when unsafe (400); a stored rule it inherits that is
        // inactive stays skipped, as it is on completions.
        resolvePolicy(request.policy);
        policy = resolvePolicy(mergeBodies(policyView(stored) as PolicyBody, request.policy), { refusedRules: 'skip', reuse: stored });
      }
      const input: VerifyInput = { content: request.response, finishReason: request.finish_reason ?? null };
      if (request.sources !== undefined) input.sources = request.sources;
      if (request.question !== undefined) input.question = request.question;
      if (request.schema !== undefined) input.schema = request.schema;
      if (request.tools !== undefined) input.tools = request.tools;
      if (request.tool_calls !== undefined) input.toolCalls = request.tool_calls;
      if (request.system_prompt !== undefined) input.systemPrompts = [request.system_prompt];
      const verification: Verification & { redacted_content?: string } = await runVerification(input, policy, tiers);
      if (verification.action === 'redact') verification.redacted_content = redactContent(request.response, verification, policy);
      return verification;
    },
    close: () => provenance.close(),
  };
}

/** A request's policy overrides merged over the org's policy, one level deep per section. */
function mergeBodies(base: PolicyBody, override: PolicyBody): PolicyBody {
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(override)) {
    const current = merged[key];
    merged[key] = value !== null && typeof value === 'object' && !Array.isArray(value) && current !== null && typeof current === 'object' ? { ...(current as object), ...value } : value;
  }
  return merged as PolicyBody;
}
