import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../helpers/app.ts';

let context: TestContext;
let strict: TestContext;
let admin: string;
let reader: string;
let orgId: string;

const auth = (key: string) => ({ authorization: `Bearer ${key}` });

beforeAll(async () => {
  context = await createTestApp();
  strict = await createTestApp({ env: { ALLOW_PRIVATE_TARGETS: 'false' } });
  const org = await context.createOrg({ plan: 'pro' });
  admin = org.apiKey;
  orgId = org.orgId;
  reader = (await context.services.accounts.createKey(orgId, { scope: 'read', keyClass: 'live' })).apiKey;
});

afterAll(async () => {
  await context?.close();
  await strict?.close();
});

describe('webhook subscriptions API', () => {
  it('creates a subscription and shows its secret only in the creation response', async () => {
    const created = await context.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: auth(admin),
      payload: { url: 'http://127.0.0.1:9/hook', events: ['threat.blocked', 'threat.alert'], description: 'SOC' },
    });
    expect(created.statusCode).toBe(201);
    const body = created.json();
    expect(body).toMatchObject({ url: 'http://127.0.0.1:9/hook', events: ['threat.blocked', 'threat.alert'], state: 'active', description: 'SOC' });
    expect(body.secret).toMatch(/^whsec_/);
    expect(body.created_at).toMatch(/Z$/);

    const fetched = await context.app.inject({ method: 'GET', url: `/api/v1/webhooks/${body.id}`, headers: auth(admin) });
    expect(fetched.statusCode).toBe(200);
    expect(fetched.json().secret).toBeUndefined();
    const listed = await context.app.inject({ method: 'GET', url: '/api/v1/webhooks', headers: auth(admin) });
    expect(listed.json().webhooks.map((webhook: { id: string }) => webhook.id)).toContain(body.id);
    expect(JSON.stringify(listed.json())).not.toContain(body.secret);
  });

  it('requires admin scope', async () => {
    const response = await context.app.inject({ method: 'GET', url: '/api/v1/webhooks', headers: auth(reader) });
    expect(response.statusCode).toBe(403);
    expect(response.json().error.code).toBe('SCOPE_INSUFFICIENT');
  });

  it('rejects unknown events and malformed URLs', async () => {
    const unknownEvent = await context.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: auth(admin),
      payload: { url: 'https://example.com/hook', events: ['threat.everything'] },
    });
    expect(unknownEvent.statusCode).toBe(400);
    expect(unknownEvent.json().error.code).toBe('VALIDATION_FAILED');
    const badScheme = await context.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: auth(admin),
      payload: { url: 'ftp://example.com/hook', events: ['gateway.down'] },
    });
    expect(badScheme.json().error.code).toBe('VALIDATION_FAILED');
  });

  it('refuses loopback, private, link-local and metadata targets in every spelling unless private targets are allowed', async () => {
    const org = await strict.createOrg();
    for (const url of [
      'http://127.0.0.1/hook',
      'http://2130706433/hook',
      'http://0x7f.0.0.1/hook',
      'http://[::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://10.1.2.3/hook',
      'http://192.168.1.1/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[fe80::1]/hook',
      'http://localhost/hook',
    ]) {
      const response = await strict.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: auth(org.apiKey), payload: { url, events: ['gateway.down'] } });
      expect(response.statusCode, url).toBe(403);
      expect(response.json().error.code, url).toBe('TARGET_FORBIDDEN');
    }
  });

  it('updates, pauses and re-enables a subscription with PATCH, and reports its failure summary', async () => {
    const created = (
      await context.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: auth(admin), payload: { url: 'http://127.0.0.1:9/a', events: ['gateway.down'] } })
    ).json();
    const paused = await context.app.inject({ method: 'PATCH', url: `/api/v1/webhooks/${created.id}`, headers: auth(admin), payload: { state: 'paused' } });
    expect(paused.json()).toMatchObject({ state: 'paused', paused_reason: 'manual' });
    const resumed = await context.app.inject({
      method: 'PATCH',
      url: `/api/v1/webhooks/${created.id}`,
      headers: auth(admin),
      payload: { state: 'active', events: ['gateway.down', 'rate_limit.exceeded'] },
    });
    expect(resumed.statusCode).toBe(200);
    expect(resumed.json()).toMatchObject({ state: 'active', consecutive_failures: 0, paused_at: null, events: ['gateway.down', 'rate_limit.exceeded'] });
    const empty = await context.app.inject({ method: 'PATCH', url: `/api/v1/webhooks/${created.id}`, headers: auth(admin), payload: {} });
    expect(empty.json().error.code).toBe('VALIDATION_FAILED');

    const deliveries = await context.app.inject({ method: 'GET', url: `/api/v1/webhooks/${created.id}/deliveries?limit=10`, headers: auth(admin) });
    expect(deliveries.json()).toEqual({ deliveries: [] });
    const summary = await context.app.inject({ method: 'GET', url: `/api/v1/webhooks/${created.id}/failures/summary`, headers: auth(admin) });
    expect(summary.statusCode).toBe(200);
    expect(summary.json()).toMatchObject({
      webhook_id: created.id,
      state: 'active',
      counts: { '2xx': 0, '4xx': 0, '429': 0, '5xx': 0, timeout: 0, network: 0 },
      last_error: null,
      next_retry_at: null,
    });
  });

  it('deletes a subscription and hides it from other orgs', async () => {
    const created = (
      await context.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: auth(admin), payload: { url: 'http://127.0.0.1:9/b', events: ['cost.anomaly'] } })
    ).json();
    const other = await context.createOrg();
    const foreign = await context.app.inject({ method: 'GET', url: `/api/v1/webhooks/${created.id}`, headers: auth(other.apiKey) });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.code).toBe('NOT_FOUND');
    const removed = await context.app.inject({ method: 'DELETE', url: `/api/v1/webhooks/${created.id}`, headers: auth(admin) });
    expect(removed.statusCode).toBe(204);
    const gone = await context.app.inject({ method: 'GET', url: `/api/v1/webhooks/${created.id}`, headers: auth(admin) });
    expect(gone.json().error.code).toBe('NOT_FOUND');
  });
});

describe('audit API', () => {
  it('records subscription changes in the org chain, lists them and verifies the chain at every level', async () => {
    const list = await context.app.inject({ method: 'GET', url: '/api/v1/audit?limit=50', headers: auth(reader) });
    expect(list.statusCode).toBe(200);
    const actions = list.json().records.map((record: { action: string }) => record.action);
    expect(actions).toContain('webhook.create');
    expect(actions).toContain('webhook.update');
    expect(actions).toContain('webhook.delete');

    for (const query of ['', '?level=full', '?level=entry&seq=1', '?level=last&n=3']) {
      const response = await context.app.inject({ method: 'GET', url: `/api/v1/audit/verify${query}`, headers: auth(admin) });
      expect(response.statusCode, query).toBe(200);
      expect(response.json(), query).toMatchObject({ ok: true, first_bad: null });
    }
    const missingSeq = await context.app.inject({ method: 'GET', url: '/api/v1/audit/verify?level=entry', headers: auth(admin) });
    expect(missingSeq.json().error.code).toBe('VALIDATION_FAILED');
  });

  it('reports a tampered record through the verify endpoint', async () => {
    await context.services.db.query(`UPDATE audit_log SET actor = 'someone-else' WHERE org_id = $1 AND seq = 2`, [orgId]);
    const response = await context.app.inject({ method: 'GET', url: '/api/v1/audit/verify', headers: auth(admin) });
    expect(response.json()).toMatchObject({ ok: false, first_bad: { seq: 2, reason: 'hash_mismatch' } });
  });

  it('requires admin scope to verify', async () => {
    const response = await context.app.inject({ method: 'GET', url: '/api/v1/audit/verify', headers: auth(reader) });
    expect(response.statusCode).toBe(403);
    expect(response.json().error.code).toBe('SCOPE_INSUFFICIENT');
  });
});
