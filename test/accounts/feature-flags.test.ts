/**
 * GET /api/v1/config/features: the deployment's feature flags in force, as the environment set
 * them, readable with a read-scope key and the same for every org.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../helpers/app.ts';

let context: TestContext;

beforeAll(async () => {
  context = await createTestApp({ env: { FEATURE_GEO_BLOCKING: 'true', FEATURE_AI_GATEWAY: 'false' } });
});

afterAll(async () => {
  await context?.close();
});

describe('feature flags in force', () => {
  it('lists every flag with its state as the environment set it and the variable that sets it, to a read-scope key', async () => {
    const { orgId } = await context.createOrg();
    const readKey = (await context.services.accounts.createKey(orgId, { scope: 'read', keyClass: 'live' })).apiKey;
    const response = await context.app.inject({ method: 'GET', url: '/api/v1/config/features', headers: { authorization: `Bearer ${readKey}` } });
    expect(response.statusCode).toBe(200);
    const flags = Object.fromEntries((response.json().data as Array<{ flag: string; enabled: boolean; variable: string }>).map((entry) => [entry.flag, entry]));
    expect(flags.geo_blocking).toEqual({ flag: 'geo_blocking', enabled: true, variable: 'FEATURE_GEO_BLOCKING' });
    expect(flags.ai_gateway).toEqual({ flag: 'ai_gateway', enabled: false, variable: 'FEATURE_AI_GATEWAY' });
    expect(flags.mcp_security?.enabled).toBe(true);
    expect(flags.hipaa_baa?.enabled).toBe(false);
    expect(Object.keys(flags).sort()).toEqual(['ai_gateway', 'geo_blocking', 'hipaa_baa', 'mcp_security', 'soc2_reports']);
  });

  it('refuses a caller without a credential with AUTH_MISSING', async () => {
    const response = await context.app.inject({ method: 'GET', url: '/api/v1/config/features' });
    expect(response.statusCode).toBe(401);
    expect(response.json().error.code).toBe('AUTH_MISSING');
  });
});
