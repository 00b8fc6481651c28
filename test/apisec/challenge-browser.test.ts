/**
 * The browser side of the challenge, in a real browser (Debian's chromium, headless, through
 * playwright-core): the interstitial page solves its proof of work with its own script, posts
 * the answer, receives the clearance cookie and reloads into the backend's answer. Skips with a
 * notice where chromium is not installed.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import { buildApp, type AppInstance } from '../../src/http/build-app.ts';
import type { Services } from '../../src/services.ts';
import { createTestServices } from '../helpers/app.ts';
import { startBackend, type Backend } from './backend.ts';

const CHROMIUM = '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available) process.stderr.write(`[apisec] ${CHROMIUM} is not installed: the browser challenge test is skipped (apt-get install chromium)\n`);

let services: Services;
let app: AppInstance;
let backend: Backend;
let browser: Browser | undefined;
let base: string;
let gatewayId: string;

beforeAll(async () => {
  if (!available) return;
  backend = await startBackend();
  services = await createTestServices({ services: { apisec: { challengeDifficulty: 12, verifyCrawlers: false } } });
  app = await buildApp(services.config, services);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  const { org } = await services.accounts.createOrg({ name: 'browser' });
  // Headless chromium announces itself (HeadlessChrome): its class is automation, challenged here.
  const gateway = await services.apisec.create(org.id, 'test', { name: 'web', backend_url: backend.url, mode: 'block', bot_policy: { automation: 'challenge' } });
  gatewayId = gateway.id;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await services?.close();
  await backend?.close();
});

describe.skipIf(!available)('browser challenge', () => {
  it('solves the proof-of-work page in chromium and lands on the backend answer', async () => {
    const context = await browser!.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => problems.push(message.text()));
    const first = await page.goto(`${base}/gw/${gatewayId}/items`);
    expect(first?.status()).toBe(403);
    try {
      await page.waitForFunction('document.body.innerText.includes(\'"items"\')', undefined, { timeout: 30_000 });
    } catch (error) {
      throw new Error(`${String(error)}; page: ${(await page.content()).slice(0, 300)}; console: ${problems.join(' | ')}`);
    }
    const cookies = await context.cookies();
    expect(cookies.find((cookie) => cookie.name === 'svc_clearance')?.httpOnly).toBe(true);
    const again = await page.goto(`${base}/gw/${gatewayId}/items`);
    expect(again?.status()).toBe(200);
    await context.close();
  }, 60_000);
});
