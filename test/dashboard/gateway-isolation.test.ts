/**
 * A backend's page served under /gw/{id} shares svc's origin with the dashboard. In a real
 * browser (Debian chromium), signed in to the dashboard, such a page's script must get neither
 * the dashboard's cookies nor an authenticated answer from svc's API, must not plant svc's
 * cookies through Set-Cookie, and the dashboard must keep working beside it (docs/apisec.md,
 * "Backend pages under /gw/{id}").
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { hasChromium, signIn, startHarness, visit, type DashboardHarness } from './browser.ts';

const EMAIL = `gw-isolation-${randomUUID().slice(0, 8)}@example.com`;
const PASSWORD = 'correct horse battery staple';

/** The page a hostile (or compromised) backend serves: it reports what its script could reach. */
const HOSTILE_PAGE = `<!doctype html><html><head><title>shop</title></head><body><pre id="report">running</pre>
<script>
(async () => {
  const report = { cookie: null, whoami: null, framed: null };
  try { report.cookie = document.cookie; } catch (error) { report.cookie = 'error:' + error.name; }
  try {
    const answer = await fetch('/api/v1/whoami', { credentials: 'include' });
    report.whoami = { status: answer.status, body: await answer.text() };
  } catch (error) { report.whoami = 'error:' + error.name; }
  try {
    const frame = document.createElement('iframe');
    frame.src = '/dashboard/';
    document.body.appendChild(frame);
    await new Promise((resolve) => { frame.onload = resolve; setTimeout(resolve, 3000); });
    report.framed = frame.contentDocument === null ? 'unreachable' : frame.contentDocument.cookie;
  } catch (error) { report.framed = 'error:' + error.name; }
  document.getElementById('report').textContent = 'done ' + JSON.stringify(report);
})();
</script></body></html>`;

let harness: DashboardHarness;
let backend: Server;
let page: Page;
const problems: string[] = [];
let gatewayId: string;

describe.skipIf(!hasChromium)('a backend page under /gw in the browser of a signed-in dashboard user', () => {
  beforeAll(async () => {
    backend = createServer((request, response) => {
      // The backend also tries to overwrite the dashboard's cookies; its own cookie is its business.
      response.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'set-cookie': ['svc_csrf=planted-by-backend; Path=/', 'svc_session=planted-by-backend; Path=/', 'shop_cart=3; Path=/'],
      });
      response.end(request.url?.startsWith('/page') ? HOSTILE_PAGE : 'ok');
    });
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    harness = await startHarness();
    // One browser context (one cookie jar) holds the dashboard tab and the backend's tab.
    const context = await harness.browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: harness.base });
    page = await context.newPage();
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));

    await page.goto('/dashboard/');
    await page.getByRole('button', { name: 'Create one' }).click();
    await page.getByLabel('E-mail').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel('Organization name').fill('Isolation test');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, EMAIL, PASSWORD);

    const user = await harness.context.services.accounts.users.login(EMAIL, PASSWORD);
    const adminKey = (await harness.context.services.accounts.createKey(user!.orgId, { scope: 'admin', keyClass: 'live', name: 'seeding' })).apiKey;
    const created = await fetch(`${harness.base}/api/v1/gateways`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'shop', backend_url: `http://127.0.0.1:${(backend.address() as AddressInfo).port}`, mode: 'block' }),
    });
    expect(created.status).toBe(201);
    gatewayId = ((await created.json()) as { id: string }).id;
  }, 120_000);

  afterAll(async () => {
    await harness?.close();
    await new Promise((resolve) => backend?.close(resolve));
  }, 60_000);

  it('gives the page neither the session cookies nor an authenticated API answer, and keeps its Set-Cookie off svc cookies', async () => {
    const before = await page.context().cookies(harness.base);
    const csrf = before.find((cookie) => cookie.name === 'svc_csrf');
    expect(csrf?.value).toMatch(/.{16,}/);

    const hostile = await page.context().newPage();
    const answer = await hostile.goto(`${harness.base}/gw/${gatewayId}/page`);
    expect(answer?.status()).toBe(200);
    expect(answer?.headers()['content-security-policy']).toMatch(/(^|,\s*)sandbox\b/);
    const text = await hostile.locator('#report').filter({ hasText: /^done / }).innerText({ timeout: 30_000 });
    const report = JSON.parse(text.slice('done '.length)) as { cookie: string | null; whoami: unknown; framed: unknown };

    // An opaque origin: document.cookie is unreadable, and nothing of svc's session is in it.
    expect(report.cookie ?? '').not.toContain(csrf!.value);
    expect(report.cookie ?? '').not.toMatch(/svc_(csrf|session)/);
    // The API call either fails outright (no CORS for an opaque origin) or is not signed in.
    if (typeof report.whoami === 'object' && report.whoami !== null) expect((report.whoami as { status: number }).status).toBe(401);
    else expect(report.whoami).toMatch(/^error:/);
    expect(JSON.stringify(report.whoami)).not.toContain(EMAIL);
    // A framed dashboard is another origin to the page.
    expect(String(report.framed)).not.toContain(csrf!.value);
    await hostile.close();

    // The backend's Set-Cookie for svc's names never reached the browser; its own cookie did.
    const after = await page.context().cookies(harness.base);
    expect(after.find((cookie) => cookie.name === 'svc_csrf')?.value).toBe(csrf!.value);
    expect(after.find((cookie) => cookie.name === 'svc_session')?.value).toBe(before.find((cookie) => cookie.name === 'svc_session')?.value);
    expect(after.find((cookie) => cookie.name === 'shop_cart')?.value).toBe('3');
  }, 90_000);

  it('leaves the dashboard working beside it, signed in', async () => {
    await visit(page, 'API keys');
    await page.getByLabel('Name').fill('after-gateway');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByTestId('new-key').waitFor();
    expect(problems).toEqual([]);
  }, 60_000);
});
