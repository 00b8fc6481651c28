/**
 * Issue #33 item 9: with FEATURE_MCP_SECURITY=false every MCP route answers 403 FEATURE_DISABLED,
 * as docs/mcp.md says; the read routes used to answer 200 (only creating a server and the proxy
 * endpoints checked the flag).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../helpers/app.ts';

let context: TestContext;
let apiKey: string;

beforeAll(async () => {
  context = await createTestApp({ env: { FEATURE_MCP_SECURITY: 'false' } });
  apiKey = (await context.createOrg()).apiKey;
});
afterAll(async () => {
  await context.close();
});

const someId = '00000000-0000-4000-8000-000000000000';

describe('FEATURE_MCP_SECURITY=false', () => {
  it.each([
    ['GET', '/api/v1/mcp/servers'],
    ['GET', `/api/v1/mcp/servers/${someId}`],
    ['GET', `/api/v1/mcp/servers/${someId}/definitions`],
    ['GET', '/api/v1/mcp/collisions'],
    ['GET', '/api/v1/mcp/quarantine'],
    ['GET', `/api/v1/mcp/quarantine/${someId}`],
    ['GET', '/api/v1/mcp/sessions/run-1'],
    ['GET', '/api/v1/mcp/audit?session_id=run-1'],
    ['POST', '/api/v1/mcp/sessions/run-1/heartbeat'],
    ['DELETE', `/api/v1/mcp/servers/${someId}`],
    ['POST', `/api/v1/mcp/quarantine/${someId}/release`],
    ['POST', '/api/v1/mcp/servers'],
    ['POST', `/mcp/${someId}`],
  ] as const)('answers %s %s with 403 FEATURE_DISABLED', async (method, url) => {
    const response = await context.app.inject({ method, url, headers: { authorization: `Bearer ${apiKey}` }, ...(method === 'POST' ? { payload: {} } : {}) });
    expect(response.statusCode).toBe(403);
    expect(response.json().error.code).toBe('FEATURE_DISABLED');
  });

  it('still asks for a credential first', async () => {
    const response = await context.app.inject({ method: 'GET', url: '/api/v1/mcp/servers' });
    expect(response.statusCode).toBe(401);
  });
});
