/**
 * What the dashboard's browser tests share: Debian's chromium driven by playwright-core (the
 * tests skip, with a visible notice, where it is not installed), the dashboard built from
 * dashboard/ when dist/dashboard is missing or older than its sources, and svc listening on a
 * loopback port with that build.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createTestApp, type TestContext, type TestOptions } from '../helpers/app.ts';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) process.stderr.write(`\n[dashboard tests] SKIPPED: ${CHROMIUM} is not installed (apt-get install chromium)\n\n`);

const root = fileURLToPath(new URL('../../', import.meta.url));

function newest(directory: string): number {
  let time = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    time = Math.max(time, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return time;
}

/** Builds dist/dashboard with Vite when it is missing or older than dashboard/. */
export function ensureDashboardBuilt(): void {
  const index = join(root, 'dist', 'dashboard', 'index.html');
  if (existsSync(index) && statSync(index).mtimeMs >= newest(join(root, 'dashboard'))) return;
  const vite = join(root, 'node_modules', 'vite', 'bin', 'vite.js');
  const built = spawnSync(process.execPath, [vite, 'build', '--config', join(root, 'dashboard', 'vite.config.ts'), '--logLevel', 'warn'], { cwd: root, stdio: 'inherit' });
  if (built.status !== 0) throw new Error('the dashboard build failed');
}

export interface DashboardHarness {
  context: TestContext;
  base: string;
  browser: Browser;
  close(): Promise<void>;
}

export async function startHarness(options: TestOptions = {}): Promise<DashboardHarness> {
  ensureDashboardBuilt();
  const context = await createTestApp(options);
  await context.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(context.app.server.address() as AddressInfo).port}`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'] });
  return {
    context,
    base,
    browser,
    async close() {
      await browser.close().catch(() => undefined);
      await context.close();
    },
  };
}

/** A new page that fails the test on any uncaught page error or CSP violation it reports. */
export async function openPage(harness: DashboardHarness, viewport = { width: 1280, height: 800 }): Promise<{ page: Page; problems: string[] }> {
  const page = await harness.browser.newPage({ viewport, baseURL: harness.base });
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy|Refused to/.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  page.on('dialog', (dialog) => void dialog.accept());
  return { page, problems };
}

/** Signs in through the sign-in form (the only way the dashboard holds a session). */
export async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto('/dashboard/');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
}

/** Opens a page of the dashboard from its navigation (no reload: the session lives in memory). */
export async function visit(page: Page, title: string, heading = title): Promise<void> {
  const navigation = page.getByRole('navigation', { name: 'Dashboard' });
  if (!(await navigation.isVisible())) await page.getByRole('button', { name: 'Menu' }).click();
  await navigation.getByRole('link', { name: title, exact: true }).click();
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/** axe-core's serious and critical violations on the page as it stands. */
export async function seriousViolations(target: Page): Promise<string[]> {
  // Evaluated over the DevTools protocol, which the page's CSP does not govern (no inline script).
  if (!(await target.evaluate('typeof window.axe !== "undefined"'))) await target.evaluate(axeSource);
  const violations = (await target.evaluate('window.axe.run(document, { resultTypes: ["violations"] }).then((result) => result.violations)')) as AxeViolation[];
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
}
