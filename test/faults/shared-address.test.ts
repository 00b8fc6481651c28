/**
 * Fault suite (issue #33 item 7): a scanner among many clients behind one address. svc on its own
 * PostgreSQL and Redis without TRUST_PROXY, as behind a NAT or a load balancer that does not
 * forward the client address: every client below reaches svc from 127.0.0.1. One of them probes
 * scanner paths and is blocked as `bot.scanner`; the others, on the same address, keep being
 * served, and so does the scanner itself on another organisation's gateway. Counts are printed.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppInstance } from '../../src/http/build-app.ts';
import type { Services } from '../../src/services.ts';
import { startBackend, type Backend } from '../apisec/backend.ts';
import { faultSupport } from './instances.ts';
import { startFaultSvc, type FaultSvc } from './svc.ts';

const support = faultSupport();
if (!support.ok) process.stdout.write(`[svc fault suite] SKIPPED: ${support.reason}\n`);

let fault: FaultSvc<true>;
let services: Services;
let app: AppInstance;
let backend: Backend;
let base: string;
const gateways: string[] = [];

beforeAll(async () => {
  if (!support.ok) return;
  [fault, backend] = await Promise.all([startFaultSvc({ pgBin: support.pgBin, redis: true }), startBackend()]);
  ({ services, app } = fault);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  for (const name of ['shop', 'other org']) {
    const { apiKey } = await services.accounts.createOrg({ name, plan: 'enterprise' });
    const created = await request(`${base}/api/v1/gateways`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      // block_details full: the test reads which pattern blocked from the 403 (the default hides it).
      body: JSON.stringify({ name, backend_url: backend.url, mode: 'block', health_check: null, block_details: 'full' }),
    });
    expect(created.statusCode).toBe(201);
    gateways.push(((await created.body.json()) as { id: string }).id);
  }
}, 120_000);

afterAll(async () => {
  if (!support.ok) return;
  await fault?.close();
  await backend?.close();
});

/** One client: a browser of its own version and language, as the many people behind one NAT. */
function client(index: number) {
  return {
    Host: 'shop.example',
    'User-Agent': `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${100 + index}.0.0.0 Safari/537.36`,
    Accept: 'application/json',
    'Accept-Language': ['en-US', 'de-DE', 'fr-FR', 'es-ES'][index % 4]!,
    'Accept-Encoding': 'gzip',
  };
}

async function get(gateway: string, path: string, headers: Record<string, string>): Promise<{ status: number; pattern: string | null }> {
  const answer = await request(`${base}/gw/${gateway}${path}`, { headers });
  const text = await answer.body.text();
  let pattern: string | null = null;
  if (answer.statusCode === 403) pattern = (JSON.parse(text) as { error?: { decision?: { patterns_matched?: { id: string }[] } } }).error?.decision?.patterns_matched?.[0]?.id ?? null;
  return { status: answer.statusCode, pattern };
}

describe.skipIf(!support.ok)('a scanner among many clients behind one address', () => {
  it('blocks the scanner as bot.scanner and keeps serving every other client behind its address', async () => {
    const [shop, otherOrg] = gateways as [string, string];
    const scanner = client(0);
    const clients = Array.from({ length: 40 }, (_, index) => client(index + 1));
    for (const path of ['/.env', '/.git/config', '/wp-admin/']) await get(shop, path, scanner);
    const scannerAfter = await get(shop, '/items', scanner);
    const answers: number[] = [];
    for (let round = 0; round < 3; round++) {
      answers.push(...(await Promise.all(clients.map((headers) => get(shop, '/items', headers)))).map((answer) => answer.status));
      // The scanner goes on probing in between: still only itself is refused.
      await get(shop, '/wp-login.php', scanner);
    }
    const elsewhere = await get(otherOrg, '/items', scanner);
    const served = answers.filter((status) => status === 200).length;
    process.stdout.write(
      `[svc fault suite] one scanner among ${clients.length} clients behind 127.0.0.1: scanner ${scannerAfter.status} ${scannerAfter.pattern ?? ''}, ` +
        `others served ${served} of ${answers.length}, scanner on another org's gateway ${elsewhere.status}\n`,
    );
    expect(scannerAfter).toEqual({ status: 403, pattern: 'bot.scanner' });
    expect(served).toBe(answers.length);
    expect(elsewhere.status).toBe(200);
  }, 60_000);
});
