/**
 * Row-level security: through the application's connection (db.withOrg), one org can neither
 * read nor write another org's rows. On real PostgreSQL that connection logs in as the
 * non-superuser role svc_app, so this holds even for SQL that tries to escape; on PGlite the
 * same policies apply to svc's own queries (SET ROLE is no boundary there — see DESIGN.md).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Services } from '../../src/services.ts';
import { createTestServices, usingPostgres } from '../helpers/app.ts';

let services: Services;
let orgA: string;
let orgB: string;

beforeAll(async () => {
  services = await createTestServices();
  orgA = (await services.accounts.createOrg({ name: 'tenant-a' })).org.id;
  orgB = (await services.accounts.createOrg({ name: 'tenant-b' })).org.id;
  await services.accounts.providerKeys.set(orgB, 'openai', 'sk-tenant-b-secret-key-0000', null);
});
afterAll(async () => services.close());

const orgScopedTables = [
  'orgs',
  'users',
  'api_keys',
  'provider_keys',
  'threat_events',
  'audit_log',
  'mcp_sessions',
  'compliance_decision_notes',
  'compliance_appeals',
  'compliance_explanations',
  'compliance_grievances',
  'compliance_models',
  'compliance_opt_outs',
  'compliance_unlearning',
];

describe('row-level security', () => {
  it('has RLS enabled and forced on every org-scoped table', async () => {
    const result = await services.db.query<{ relname: string; relrowsecurity: boolean; relforcerowsecurity: boolean }>(
      `SELECT relname, relrowsecurity, relforcerowsecurity FROM pg_class WHERE relname = ANY($1)`,
      [orgScopedTables],
    );
    expect(result.rows).toHaveLength(orgScopedTables.length);
    for (const row of result.rows) {
      expect(row.relrowsecurity, row.relname).toBe(true);
      expect(row.relforcerowsecurity, row.relname).toBe(true);
    }
  });

  it('shows an org only its own rows', async () => {
    const seen = await services.db.withOrg(orgA, async (tx) => ({
      orgs: (await tx.query<{ id: string }>('SELECT id FROM orgs')).rows.map((row) => row.id),
      keys: (await tx.query<{ org_id: string }>('SELECT org_id FROM api_keys')).rows.map((row) => row.org_id),
      providerKeys: (await tx.query('SELECT * FROM provider_keys')).rows.length,
    }));
    expect(seen.orgs).toEqual([orgA]);
    expect(new Set(seen.keys)).toEqual(new Set([orgA]));
    expect(seen.providerKeys).toBe(0);
  });

  it('refuses to insert a row for another org', async () => {
    await expect(
      services.db.withOrg(orgA, (tx) =>
        tx.query(`INSERT INTO threat_events (id, org_id, request_id, pillar, kind, threat_score, decision) VALUES ($1, $2, 'r', 'api', 'sqli', 0.9, 'block')`, [
          randomUUID(),
          orgB,
        ]),
      ),
    ).rejects.toThrow(/row-level security/);
  });

  it('keeps compliance records (grievances, opt-outs, unlearning requests) inside their org', async () => {
    await services.compliance.grievances.submit(orgB, { category: 'other', description: 'tenant b only' }, 'test');
    await services.compliance.privacy.optOut(orgB, 'subject-b', undefined, 'test');
    const seen = await services.db.withOrg(orgA, async (tx) => ({
      grievances: (await tx.query('SELECT id FROM compliance_grievances')).rows.length,
      optOuts: (await tx.query('SELECT subject_id FROM compliance_opt_outs')).rows.length,
    }));
    expect(seen).toEqual({ grievances: 0, optOuts: 0 });
    await expect(
      services.db.withOrg(orgA, (tx) =>
        tx.query(`INSERT INTO compliance_unlearning (org_id, id, session_ids, state, requested_at, requested_by, due_at) VALUES ($1, $2, '[]', 'queued', now(), 'x', now())`, [orgB, randomUUID()]),
      ),
    ).rejects.toThrow(/row-level security/);
    const deleted = await services.db.withOrg(orgA, (tx) => tx.query('DELETE FROM compliance_grievances WHERE org_id = $1', [orgB]));
    expect(deleted.rowCount).toBe(0);
  });

  it('neither updates nor deletes another org’s rows', async () => {
    const updated = await services.db.withOrg(orgA, (tx) => tx.query(`UPDATE provider_keys SET base_url = 'http://evil.example' WHERE org_id = $1`, [orgB]));
    const deleted = await services.db.withOrg(orgA, (tx) => tx.query('DELETE FROM api_keys WHERE org_id = $1', [orgB]));
    expect(updated.rowCount).toBe(0);
    expect(deleted.rowCount).toBe(0);
    const stillThere = await services.db.withOrg(orgB, (tx) => tx.query<{ base_url: string | null }>('SELECT base_url FROM provider_keys'));
    expect(stillThere.rows).toEqual([{ base_url: null }]);
  });

  it('cannot move its own row into another org', async () => {
    await expect(
      services.db.withOrg(orgA, (tx) => tx.query('UPDATE api_keys SET org_id = $1', [orgB])),
    ).rejects.toThrow(/row-level security/);
  });

  it('sees nothing when no org is set on the application connection', async () => {
    const rows = await services.db.withOrg('00000000-0000-0000-0000-000000000000', (tx) => tx.query('SELECT * FROM orgs'));
    expect(rows.rows).toHaveLength(0);
  });

  it.skipIf(usingPostgres)('keeps an org transaction under row-level security after an embedded COPY in it', async () => {
    const after = await services.db.withOrg(orgA, async (tx) => {
      const copied = await tx.copyRows!('ai_provenance', ['org_id', 'request_id', 'content_hash', 'delivered', 'provider', 'model', 'streamed', 'sources', 'checks', 'risk_class', 'audit_seq', 'audit_hash'], `${orgA}\trls-copy-${randomUUID()}\th\tt\topenai\tm\tf\t[]\t{}\tlimited\t1\th\n`);
      const user = (await tx.query<{ role: string }>('SELECT current_user AS role')).rows[0]!.role;
      const orgs = (await tx.query<{ id: string }>('SELECT id FROM orgs')).rows.map((row) => row.id);
      return { copied, user, orgs };
    });
    expect(after).toEqual({ copied: 1, user: 'svc_app', orgs: [orgA] });
  });

  describe.skipIf(!usingPostgres)('on real PostgreSQL', () => {
    it('runs tenant queries as a login role that is neither superuser nor allowed to bypass RLS', async () => {
      const role = await services.db.withOrg(orgA, (tx) =>
        tx.query<{ current_user: string; rolsuper: boolean; rolbypassrls: boolean }>(
          'SELECT current_user, r.rolsuper, r.rolbypassrls FROM pg_roles r WHERE r.rolname = current_user',
        ),
      );
      expect(role.rows[0]).toEqual({ current_user: 'svc_app', rolsuper: false, rolbypassrls: false });
    });

    it('cannot escape its org by changing role or the org setting to another org’s rows by other means', async () => {
      await expect(services.db.withOrg(orgA, (tx) => tx.query('SET ROLE postgres'))).rejects.toThrow();
      await expect(services.db.withOrg(orgA, (tx) => tx.query('ALTER TABLE api_keys DISABLE ROW LEVEL SECURITY'))).rejects.toThrow();
      await expect(services.db.withOrg(orgA, (tx) => tx.query("SELECT svc_set_app_password('x')"))).rejects.toThrow();
    });
  });
});

if (!usingPostgres) {
  console.warn('[svc tests] rls.test.ts: DATABASE_URL not set — the real-PostgreSQL role checks are skipped (CI runs them)');
}
