/**
 * Verification through the Fastify app, the real gateway and adapters, against the fake
 * upstream servers on loopback (test/fakes/providers): annotate, block, redact, retry with the
 * next provider, streaming with a failure in the middle, the guard API, the policy endpoint and
 * the provenance endpoint with its audit entries.
 */
import { POLICY_ATOM_COMPARISONS, POLICY_PATTERN_SCANS, provenanceBatchDigest } from '../../src/verification/index.ts';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp, type AppInstance } from '../../src/http/build-app.ts';
import type { Services } from '../../src/services.ts';
import { FAKE_CREDENTIALS, startFakeProvider, type FakeProvider } from '../fakes/providers/index.ts';
import { createTestServices } from '../helpers/app.ts';

let services: Services;
let app: AppInstance;
let openai: FakeProvider;
let anthropic: FakeProvider;

beforeAll(async () => {
  services = await createTestServices({ services: { gateway: { timers: false, retryPolicy: { attemptsPerProvider: 1, baseDelayMs: 5, maxDelayMs: 20, totalBudgetMs: 5_000, attemptTimeoutMs: 2_000 } } } });
  app = await buildApp(services.config, services);
  await app.ready();
  [openai, anthropic] = await Promise.all([startFakeProvider('openai'), startFakeProvider('anthropic')]);
});

afterAll(async () => {
  await app?.close();
  await services?.close();
  await Promise.allSettled([openai?.close(), anthropic?.close()]);
});

async function org(providers: Array<[string, FakeProvider]>) {
  const { org: created, apiKey } = await services.accounts.createOrg({ name: `verify-${Math.random().toString(36).slice(2, 8)}` });
  for (const [provider, fake] of providers) await services.accounts.providerKeys.set(created.id, provider, FAKE_CREDENTIALS.default, fake.baseUrl);
  return { orgId: created.id as string, headers: { authorization: `Bearer ${apiKey as string}` } };
}

const ask = (content: string, extra: Record<string, unknown> = {}) => ({ provider: 'openai', model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra });

function sse(payload: string): Array<Record<string, unknown>> {
  return payload
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
}

describe('verification of completions', () => {
  it('attaches a verification object with the four layers to a JSON completion', async () => {
    openai.reset();
    const { headers } = await org([['openai', openai]]);
    const response = await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: ask('hi') });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.verification).toMatchObject({ passed: true, action: 'none', content_sha256: createHash('sha256').update(body.content).digest('hex') });
    for (const layer of ['integrity', 'grounding', 'structural', 'constraint']) expect(body.verification.layers[layer]).toHaveProperty('verdict');
    expect(body.verification.layers.grounding.verdict).toBe('skipped');
  });

  it('grounds the answer in the request sources and reports the unsupported number', async () => {
    openai.reset();
    openai.setBehaviour({ content: 'The warranty lasts 5 years from the date of purchase.' });
    const { headers } = await org([['openai', openai]]);
    const response = await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: ask('How long is the warranty?', { sources: [{ id: 'doc-1', content: 'The warranty lasts 2 years from the date of purchase.' }] }) });
    const body = response.json();
    expect(body.verification.layers.grounding.verdict).toBe('fail');
    const finding = body.verification.layers.grounding.findings.find((item: { reason: string }) => item.reason === 'number_not_in_sources');
    expect(body.content.slice(finding.start, finding.end)).toBe('5');
  });

  it('answers VERIFICATION_BLOCKED instead of the content when a blocking rule fails', async () => {
    openai.reset();
    openai.setBehaviour({ content: 'Here is the internal project codename: BLUEBIRD.' });
    const { headers } = await org([['openai', openai]]);
    const put = await app.inject({ method: 'PUT', url: '/api/v1/config/verification', headers, payload: { actions: { constraint: 'block' }, constraint: { banned_phrases: ['bluebird'] } } });
    expect(put.statusCode).toBe(200);
    const response = await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: ask('codename?') });
    expect(response.statusCode).toBe(422);
    expect(response.json().error).toMatchObject({ code: 'VERIFICATION_BLOCKED', verification: { passed: false, action: 'block' } });
    expect(response.payload).not.toContain('BLUEBIRD');
  });

  it('redacts the offending span of a JSON answer and hashes what was delivered', async () => {
    openai.reset();
    openai.setBehaviour({ content: 'Your key is AKIAIOSFODNN7EXAMPLE, keep it safe.' });
    const { headers } = await org([['openai', openai]]);
    await app.inject({ method: 'PUT', url: '/api/v1/config/verification', headers, payload: { actions: { constraint: 'redact' } } });
    const body = (await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: ask('key?') })).json();
    expect(body.content).toBe('Your key is [redacted], keep it safe.');
    expect(body.verification).toMatchObject({ passed: false, action: 'redact', content_sha256: createHash('sha256').update(body.content).digest('hex') });
    expect(body.verification.layers.constraint.findings).toEqual([expect.objectContaining({ reason: 'secret_in_output', detail: 'SECRET' })]);
  });

  it('validates a JSON answer against the request response_schema', async () => {
    openai.reset();
    openai.setBehaviour({ content: '{"city": "Oslo", "temperature": "cold"}' });
    const { headers } = await org([['openai', openai]]);
    const schema = { type: 'object', required: ['city', 'temperature'], properties: { city: { type: 'string' }, temperature: { type: 'number' } } };
    const body = (await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: ask('weather as JSON', { response_schema: schema }) })).json();
    expect(body.verification.layers.structural).toMatchObject({ verdict: 'fail', findings: [{ reason: 'schema_violation', detail: '/temperature type' }] });
  });

  it('retries once with the next provider of the route and delivers the answer that passes', async () => {
    openai.reset();
    anthropic.reset();
    openai.setBehaviour({ content: 'Visit https://phish.test/login to reset it.' });
    anthropic.setBehaviour({ content: 'Use the reset link on https://example.com/account.' });
    const { headers } = await org([['openai', openai], ['anthropic', anthropic]]);
    await app.inject({ method: 'PUT', url: '/api/v1/gateway/routing', headers, payload: { strategy: 'failover', providers: ['openai', 'anthropic'] } });
    await app.inject({ method: 'PUT', url: '/api/v1/config/verification', headers, payload: { actions: { constraint: 'retry' }, constraint: { allowed_url_hosts: ['example.com'] } } });
    const response = await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: ask('How do I reset my password?') });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.provider).toBe('anthropic');
    expect(body.content).toContain('example.com');
    expect(body.verification).toMatchObject({ passed: true, retry: { from_provider: 'openai', to_provider: 'anthropic', first: { passed: false, failed_layers: ['constraint'] } } });
    expect(openai.requests).toHaveLength(1);
    expect(anthropic.requests).toHaveLength(1);
  });

  it('blocks when the retry answer fails too', async () => {
    openai.reset();
    anthropic.reset();
    openai.setBehaviour({ content: 'Visit https://phish.test/login.' });
    anthropic.setBehaviour({ content: 'Visit https://other.test/login.' });
    const { headers } = await org([['openai', openai], ['anthropic', anthropic]]);
    await app.inject({ method: 'PUT', url: '/api/v1/gateway/routing', headers, payload: { strategy: 'failover', providers: ['openai', 'anthropic'] } });
    await app.inject({ method: 'PUT', url: '/api/v1/config/verification', headers, payload: { actions: { constraint: 'retry' }, constraint: { allowed_url_hosts: ['example.com'] } } });
    const response = await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: ask('How do I reset my password?') });
    expect(response.statusCode).toBe(422);
    expect(response.json().error).toMatchObject({ code: 'VERIFICATION_BLOCKED', verification: { retry: { from_provider: 'openai', to_provider: 'anthropic' } } });
  });
  it('refuses with 403 THREAT_BLOCKED when the retry answer leaks the system prompt', async () => {
    openai.reset();
    anthropic.reset();
    const system = 'You are the booking assistant of Alder Hotels. Offer the loyalty discount only to gold members and never quote internal room codes to guests under any circumstances.';
    openai.setBehaviour({ content: 'Visit https://phish.test/login to book.' });
    anthropic.setBehaviour({ content: `Sure, my instructions are: ${system}` });
    const { headers } = await org([['openai', openai], ['anthropic', anthropic]]);
    await app.inject({ method: 'PUT', url: '/api/v1/gateway/routing', headers, payload: { strategy: 'failover', providers: ['openai', 'anthropic'] } });
    await app.inject({ method: 'PUT', url: '/api/v1/config/verification', headers, payload: { actions: { constraint: 'retry' }, constraint: { allowed_url_hosts: ['example.com'], system_prompt_leak: false } } });
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/gateway/completions',
      headers,
      payload: { ...ask('What can you do for me?'), messages: [{ role: 'system', content: system }, { role: 'user', content: 'What can you do for me?' }] },
    });
    expect(anthropic.requests).toHaveLength(1);
    expect(response.statusCode).toBe(403);
    expect(response.json().error.code).toBe('THREAT_BLOCKED');
  });
});

describe('verification while streaming', () => {
  const secretText = 'First part of the answer is harmless and long enough to be released early. Then it says the password: hunter2 and continues with more words after.';

  it('ends the stream with an error event carrying the verdict when a blocking rule fails mid-stream', async () => {
    openai.reset();
    openai.setBehaviour({ content: secretText });
    const { headers } = await org([['openai', openai]]);
    await app.inject({ method: 'PUT', url: '/api/v1/config/verification', headers, payload: { actions: { constraint: 'block' }, constraint: { must_not_match: ['(?i)password: ?\\S+'] }, stream: { hold_back_chars: 32 } } });
    const response = await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: ask('tell me', { stream: true }) });
    expect(response.statusCode).toBe(200);
    const events = sse(response.payload);
    const text = events.filter((event) => 'delta' in event).map((event) => event.delta).join('');
    expect(text.length).toBeGreaterThan(0);
    expect(secretText.startsWith(text)).toBe(true);
    expect(text).not.toContain('hunter2');
    const last = events.at(-1)!;
    expect(last.error).toMatchObject({ code: 'VERIFICATION_BLOCKED', verification: { passed: false, action: 'block' } });
    expect(events.some((event) => event.done === true)).toBe(false);
  });

  it('redacts the failing span mid-stream and carries the verification object in the final event', async () => {
    openai.reset();
    openai.setBehaviour({ content: secretText });
    const { headers } = await org([['openai', openai]]);
    await app.inject({ method: 'PUT', url: '/api/v1/config/verification', headers, payload: { actions: { constraint: 'redact' }, constraint: { must_not_match: ['(?i)password: ?\\S+'] }, stream: { hold_back_chars: 32 } } });
    const response = await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: ask('tell me', { stream: true }) });
    const events = sse(response.payload);
    const text = events.filter((event) => 'delta' in event).map((event) => event.delta).join('');
    expect(text).toBe(secretText.replace('password: hunter2', '[redacted]'));
    expect(events.at(-1)).toMatchObject({ done: true, verification: { passed: false, action: 'redact', hold_back_chars: 32 } });
  });

  it('flags a stream cut by the upstream in the error event instead of truncating silently', async () => {
    openai.reset();
    openai.setBehaviour({ content: secretText, truncateAfterChunks: 5 });
    const { headers } = await org([['openai', openai]]);
    const response = await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: ask('tell me', { stream: true }) });
    const last = sse(response.payload).at(-1)!;
    expect(last.error).toMatchObject({ verification: { passed: false } });
    const reasons = ((last.error as { verification: { layers: { integrity: { findings: Array<{ reason: string }> } } } }).verification.layers.integrity.findings).map((finding) => finding.reason);
    expect(reasons).toContain('stream_cut');
  });
});

describe('guard API and policy endpoint', () => {
  it('verifies a response without calling any model', async () => {
    openai.reset();
    const { headers } = await org([]);
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/verify',
      headers,
      payload: { response: '{"total": 12}', schema: { type: 'object', required: ['total', 'currency'] }, sources: ['The total is 12 EUR.'], policy: { actions: { structural: 'block' } } },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ passed: false, action: 'block', layers: { structural: { verdict: 'fail', findings: [{ reason: 'schema_violation' }] } } });
    expect(openai.requests).toHaveLength(0);
  });

  it('refuses a policy with a regex that is not linear-time, naming the field', async () => {
    const { headers } = await org([]);
    const response = await app.inject({ method: 'PUT', url: '/api/v1/config/verification', headers, payload: { constraint: { must_not_match: ['ok', '(a+)+b'] } } });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'body.constraint.must_not_match[1]', reason: 'regex_nested_quantifier' });
  });

  it('refuses a policy pattern that stacks unbounded quantifiers, naming the field, and accepts an ordinary pattern', async () => {
    const { headers } = await org([]);
    const adversarial = '\\s*'.repeat(12) + 'x';
    const refused = await app.inject({ method: 'PUT', url: '/api/v1/config/verification', headers, payload: { constraint: { must_match: [adversarial] } } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'body.constraint.must_match[0]', reason: 'regex_multiple_unbounded_quantifiers' });
    const guarded = await app.inject({ method: 'POST', url: '/api/v1/verify', headers, payload: { response: 'ok', policy: { constraint: { must_not_match: [adversarial] } } } });
    expect(guarded.statusCode).toBe(400);
    expect(guarded.json().error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'body.constraint.must_not_match[0]', reason: 'regex_multiple_unbounded_quantifiers' });
    const saved = await app.inject({ method: 'PUT', url: '/api/v1/config/verification', headers, payload: { constraint: { must_not_match: ['(?i)internal-\\d{4,}'] } } });
    expect(saved.statusCode).toBe(200);
    const verified = await app.inject({ method: 'POST', url: '/api/v1/verify', headers, payload: { response: 'Room code INTERNAL-40412 is free.' } });
    expect(verified.json()).toMatchObject({ layers: { constraint: { findings: [{ reason: 'must_not_match_matched', detail: 'must_not_match[0]' }] } } });
  });

  it('saves and applies a pattern whose unbounded quantifiers cannot match the same character, and refuses one whose can', async () => {
    const { headers } = await org([]);
    const saved = await app.inject({ method: 'PUT', url: '/api/v1/config/verification', headers, payload: { constraint: { must_not_match: ['(?i)password:\\s*\\S+'] } } });
    expect(saved.statusCode).toBe(200);
    const verified = await app.inject({ method: 'POST', url: '/api/v1/verify', headers, payload: { response: 'Use Password:   hunter2 to log in.' } });
    expect(verified.json()).toMatchObject({ layers: { constraint: { verdict: 'fail', findings: [{ reason: 'must_not_match_matched', detail: 'must_not_match[0]', start: 4, end: 23 }] } } });
    const overlapping = await app.inject({ method: 'PUT', url: '/api/v1/config/verification', headers, payload: { constraint: { must_not_match: ['password:\\w+\\s*\\w+'] } } });
    expect(overlapping.statusCode).toBe(400);
    expect(overlapping.json().error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'body.constraint.must_not_match[0]', reason: 'regex_multiple_unbounded_quantifiers' });
  });

  it('refuses a guard policy whose patterns together need more new class comparisons than one pattern may, and applies a stored one that needs them', async () => {
    // Each pattern needs one class-against-class scan of its own (code points no other test uses):
    // 128 of them once held the process for seconds on one request.
    const base = 0x5000 + Math.floor(Math.random() * 8_000);
    const patterns = Array.from({ length: 2 * POLICY_PATTERN_SCANS }, (_, i) => `[^${String.fromCodePoint(base + i)}]+[${String.fromCodePoint(base + i)}]+`);
    const { headers } = await org([]);
    const guarded = await app.inject({ method: 'POST', url: '/api/v1/verify', headers, payload: { response: 'ok', policy: { constraint: { must_match: patterns.slice(0, POLICY_PATTERN_SCANS - 1), must_not_match: patterns.slice(POLICY_PATTERN_SCANS - 1) } } } });
    expect(guarded.statusCode).toBe(400);
    expect(guarded.json().error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'body.constraint.must_not_match[1]', reason: 'regex_too_many_pattern_checks', limit: POLICY_PATTERN_SCANS });
    // Comparisons grow with the square of a pattern's atoms: 256 literals each with `*` are refused
    // (128 of them were accepted after 15 s of CPU), in a policy and in a guard schema alike.
    const literals = Array.from({ length: 256 }, (_, i) => `${String.fromCodePoint(0x4e00 + i)}*`).join('');
    const quadratic = await app.inject({ method: 'POST', url: '/api/v1/verify', headers, payload: { response: 'ok', policy: { constraint: { must_match: [literals] } } } });
    expect(quadratic.json().error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'body.constraint.must_match[0]', reason: 'regex_too_many_pattern_checks', limit: POLICY_ATOM_COMPARISONS });
    const schema = await app.inject({ method: 'POST', url: '/api/v1/verify', headers, payload: { response: '{"a":"b"}', schema: { type: 'object', properties: { a: { type: 'string', pattern: literals } } } } });
    expect(schema.json().error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'body.schema', reason: 'schema_too_many_pattern_checks' });
    // A policy stored with more (saved in steps) is applied in full when loaded (another org: the first one's policy is cached).
    const { orgId, headers: storedHeaders } = await org([]);
    const stored = Array.from({ length: POLICY_PATTERN_SCANS + 2 }, (_, i) => `[^${String.fromCodePoint(base + 100 + i)}]+[${String.fromCodePoint(base + 100 + i)}]+`);
    await services.db.withOrg(orgId, (tx) => tx.query(`INSERT INTO verification_policies (org_id, policy, updated_at) VALUES ($1, $2::jsonb, now())`, [orgId, JSON.stringify({ constraint: { must_not_match: stored } })]));
    const shown = await app.inject({ method: 'GET', url: '/api/v1/config/verification', headers: storedHeaders });
    expect(shown.json()).toMatchObject({ policy: { constraint: { must_not_match: stored } }, inactive_rules: [] });
    const last = String.fromCodePoint(base + 100 + POLICY_PATTERN_SCANS + 1);
    const verified = await app.inject({ method: 'POST', url: '/api/v1/verify', headers: storedHeaders, payload: { response: `code a${last}` } });
    expect(verified.json()).toMatchObject({ layers: { constraint: { verdict: 'fail', findings: [{ reason: 'must_not_match_matched', detail: `must_not_match[${POLICY_PATTERN_SCANS + 1}]` }] } } });
  });

  it('refuses a guard schema whose pattern stacks unbounded quantifiers, naming the field, and applies an ordinary pattern', async () => {
    const { headers } = await org([]);
    const adversarial = '\\s*'.repeat(12) + 'x';
    const refused = await app.inject({ method: 'POST', url: '/api/v1/verify', headers, payload: { response: '{"code":"ab"}', schema: { type: 'object', properties: { code: { type: 'string', pattern: adversarial } } } } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'body.schema', reason: 'schema_pattern_not_linear' });
    const keyed = await app.inject({ method: 'POST', url: '/api/v1/verify', headers, payload: { response: '{}', schema: { type: 'object', patternProperties: { [adversarial]: { type: 'string' } } } } });
    expect(keyed.statusCode).toBe(400);
    expect(keyed.json().error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'body.schema', reason: 'schema_pattern_not_linear' });
    const checked = await app.inject({ method: 'POST', url: '/api/v1/verify', headers, payload: { response: '{"code":"ab"}', schema: { type: 'object', properties: { code: { type: 'string', pattern: '^[A-Z]{2}-\\d+$' } } } } });
    expect(checked.statusCode).toBe(200);
    expect(checked.json()).toMatchObject({ layers: { structural: { verdict: 'fail', findings: [{ reason: 'schema_violation', detail: '/code pattern' }] } } });
  });

  it('refuses unknown policy fields and actions', async () => {
    const { headers } = await org([]);
    const unknown = await app.inject({ method: 'PUT', url: '/api/v1/config/verification', headers, payload: { actions: { grounding: 'explode' } } });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error.code).toBe('VALIDATION_FAILED');
  });

  it('shows the defaults, the saved policy and the defaults again after a reset', async () => {
    const { headers } = await org([]);
    const before = await app.inject({ method: 'GET', url: '/api/v1/config/verification', headers });
    expect(before.json()).toMatchObject({ updated_at: null, policy: { enabled: true, actions: { grounding: 'annotate' }, stream: { hold_back_chars: 128 } } });
    await app.inject({ method: 'PUT', url: '/api/v1/config/verification', headers, payload: { grounding: { threshold: 0.7 } } });
    const after = await app.inject({ method: 'GET', url: '/api/v1/config/verification', headers });
    expect(after.json().policy.grounding.threshold).toBe(0.7);
    expect(after.json().updated_at).not.toBeNull();
    expect((await app.inject({ method: 'DELETE', url: '/api/v1/config/verification', headers })).statusCode).toBe(204);
    expect((await app.inject({ method: 'GET', url: '/api/v1/config/verification', headers })).json().policy.grounding.threshold).toBe(0.5);
  });
});

describe('AI provenance', () => {
  it('serves the provenance record of a completion, chained in the audit log, and audits the read', async () => {
    openai.reset();
    openai.setBehaviour({ content: 'The office opens at 9.' });
    const { orgId, headers } = await org([['openai', openai]]);
    const completion = (await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: ask('When does it open?', { sources: [{ id: 'hours', content: 'The office opens at 9.' }] }) })).json();
    const response = await app.inject({ method: 'GET', url: `/api/v1/compliance/ai-provenance/${completion.request_id}`, headers });
    expect(response.statusCode).toBe(200);
    const record = response.json();
    expect(record).toMatchObject({
      request_id: completion.request_id,
      content_hash: createHash('sha256').update(completion.content).digest('hex'),
      provider: 'openai',
      model: completion.model,
      risk_class: 'limited_risk',
      sb942_manifest_present: false,
      delivered: true,
      sources: [{ index: 0, id: 'hours', sha256: createHash('sha256').update('The office opens at 9.').digest('hex') }],
      checks: { integrity: 'pass', grounding: 'pass', structural: 'pass', constraint: 'pass' },
    });
    const audit = services.audit;
    const entries = await audit.list(orgId);
    const chained = entries.find((entry) => entry.action === 'ai.provenance.recorded' && entry.seq === record.chain_of_custody.audit_seq)!;
    expect(chained).toBeDefined();
    expect(record.chain_of_custody).toEqual({ audit_seq: chained.seq, audit_hash: chained.hash, audit_action: 'ai.provenance.recorded' });
    // The batch's entry covers this record (alone in its batch here) by the digest of its canonical form.
    expect(chained.details).toMatchObject({ records: 1, records_sha256: provenanceBatchDigest([record]) });
    expect(entries.some((entry) => entry.action === 'compliance.ai_provenance.read' && entry.target === completion.request_id)).toBe(true);
    expect((await audit.verify(orgId)).ok).toBe(true);
  });

  it('keeps the record of a completion whose sources carry a lone surrogate (stored as U+FFFD)', async () => {
    openai.reset();
    openai.setBehaviour({ content: 'The office opens at 9.' });
    const { orgId, headers } = await org([['openai', openai]]);
    const completion = await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: ask('When does it open?', { sources: [{ id: 'hours\ud800', title: 'Opening \udc00 hours', content: 'The office opens at 9.' }] }) });
    expect(completion.statusCode).toBe(200);
    const response = await app.inject({ method: 'GET', url: `/api/v1/compliance/ai-provenance/${completion.json().request_id}`, headers });
    expect(response.statusCode).toBe(200);
    expect(response.json().sources[0].id).toBe('hours\uFFFD');
    expect((await services.audit.verify(orgId)).ok).toBe(true);
  });

  it('answers 404 for a request id of another org', async () => {
    openai.reset();
    const first = await org([['openai', openai]]);
    const completion = (await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers: first.headers, payload: ask('hi') })).json();
    const second = await org([]);
    const response = await app.inject({ method: 'GET', url: `/api/v1/compliance/ai-provenance/${completion.request_id}`, headers: second.headers });
    expect(response.statusCode).toBe(404);
    expect(response.json().error.code).toBe('NOT_FOUND');
  });
});

describe('stored policies with rules that are refused today', () => {
  it('skips a stored pattern that is now refused, shows it inactive, names it in results, logs once, and still applies the other rules', async () => {
    const { orgId, headers } = await org([['openai', openai]]);
    const refusedPattern = '\\d*\\d+ dollars';
    // Written straight into the table, as a policy saved before the bounded-time rule would be.
    await services.db.withOrg(orgId, (tx) =>
      tx.query(`INSERT INTO verification_policies (org_id, policy, updated_at) VALUES ($1, $2::jsonb, now())`, [
        orgId,
        JSON.stringify({ actions: { constraint: 'block' }, constraint: { must_not_match: [refusedPattern, 'forbidden'] } }),
      ]),
    );
    const warn = vi.spyOn(services.logger, 'warn');
    try {
      const shown = await app.inject({ method: 'GET', url: '/api/v1/config/verification', headers });
      expect(shown.statusCode).toBe(200);
      expect(shown.json()).toMatchObject({
        policy: { actions: { constraint: 'block' }, constraint: { must_not_match: [refusedPattern, 'forbidden'] } },
        inactive_rules: [{ rule: 'constraint.must_not_match[0]', inactive_reason: 'regex_multiple_unbounded_quantifiers' }],
      });

      const verified = await app.inject({ method: 'POST', url: '/api/v1/verify', headers, payload: { response: 'That costs 12 dollars and is forbidden.' } });
      expect(verified.statusCode).toBe(200);
      expect(verified.json()).toMatchObject({
        passed: false,
        action: 'block',
        layers: {
          constraint: {
            verdict: 'fail',
            findings: [{ reason: 'must_not_match_matched', detail: 'must_not_match[1]' }],
            info: { skipped_rules: [{ rule: 'constraint.must_not_match[0]', reason: 'regex_multiple_unbounded_quantifiers' }] },
          },
        },
      });
      expect(verified.json().layers.constraint.findings).toHaveLength(1);

      // The policy cache expires and the row is read again: the warning is not repeated.
      const now = Date.now();
      vi.spyOn(Date, 'now').mockReturnValue(now + 60_000);
      openai.reset();
      openai.setBehaviour({ content: 'This is forbidden.' });
      const completion = await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers, payload: ask('hi') });
      expect(completion.json().error).toMatchObject({ code: 'VERIFICATION_BLOCKED' });
      const warnings = warn.mock.calls.filter(([fields]) => typeof fields === 'object' && fields !== null && (fields as { org_id?: string }).org_id === orgId);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]![0]).toMatchObject({ inactive_rules: [{ rule: 'constraint.must_not_match[0]', reason: 'regex_multiple_unbounded_quantifiers' }] });
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('still refuses the same pattern on PUT and in a guard request policy, with the stable code, while a stored inactive rule does not fail the guard request', async () => {
    const { orgId, headers } = await org([]);
    await services.db.withOrg(orgId, (tx) =>
      tx.query(`INSERT INTO verification_policies (org_id, policy, updated_at) VALUES ($1, $2::jsonb, now())`, [orgId, JSON.stringify({ constraint: { must_match: ['\\s*\\s+x'] } })]),
    );
    const inherited = await app.inject({ method: 'POST', url: '/api/v1/verify', headers, payload: { response: 'ok', policy: { constraint: { banned_phrases: ['nope'] } } } });
    expect(inherited.statusCode).toBe(200);
    expect(inherited.json().layers.constraint).toMatchObject({ verdict: 'pass', info: { skipped_rules: [{ rule: 'constraint.must_match[0]', reason: 'regex_multiple_unbounded_quantifiers' }] } });
    const guarded = await app.inject({ method: 'POST', url: '/api/v1/verify', headers, payload: { response: 'ok', policy: { constraint: { must_not_match: ['\\d*\\d+ dollars'] } } } });
    expect(guarded.statusCode).toBe(400);
    expect(guarded.json().error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'body.constraint.must_not_match[0]', reason: 'regex_multiple_unbounded_quantifiers' });
    const put = await app.inject({ method: 'PUT', url: '/api/v1/config/verification', headers, payload: { constraint: { must_not_match: ['\\d*\\d+ dollars'] } } });
    expect(put.statusCode).toBe(400);
    expect(put.json().error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'body.constraint.must_not_match[0]', reason: 'regex_multiple_unbounded_quantifiers' });
  });

  it('skips a stored JSON Schema whose pattern is now refused and keeps the rest of the policy', async () => {
    const { orgId, headers } = await org([]);
    await services.db.withOrg(orgId, (tx) =>
      tx.query(`INSERT INTO verification_policies (org_id, policy, updated_at) VALUES ($1, $2::jsonb, now())`, [
        orgId,
        JSON.stringify({ structural: { require_json: true, json_schema: { type: 'object', properties: { code: { type: 'string', pattern: '\\s*\\s*x' } } } }, constraint: { banned_phrases: ['forbidden'] } }),
      ]),
    );
    const shown = await app.inject({ method: 'GET', url: '/api/v1/config/verification', headers });
    expect(shown.json().inactive_rules).toEqual([expect.objectContaining({ rule: 'structural.json_schema', inactive_reason: 'schema_pattern_not_linear' })]);
    const verified = await app.inject({ method: 'POST', url: '/api/v1/verify', headers, payload: { response: '{"code":"forbidden"}' } });
    expect(verified.json()).toMatchObject({
      layers: {
        structural: { verdict: 'pass', info: { skipped_rules: [{ rule: 'structural.json_schema', reason: 'schema_pattern_not_linear' }] } },
        constraint: { verdict: 'fail', findings: [{ reason: 'banned_phrase' }] },
      },
    });
  });
});
