/**
 * svc serves the dashboard itself: `/` sends a browser to it, any client route under /dashboard
 * answers the page (never cached) with a Content-Security-Policy, hashed assets are cached for a
 * year, a missing asset and unknown API paths stay JSON 404s, and an unbuilt dashboard says how
 * to build it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { DASHBOARD_ROOT, registerDashboard } from '../../src/http/dashboard.ts';
import type { AppInstance } from '../../src/platform/http-plugin.ts';
import { ensureDashboardBuilt } from '../dashboard/browser.ts';
import { createTestApp, type TestContext } from '../helpers/app.ts';

let context: TestContext;

beforeAll(async () => {
  ensureDashboardBuilt();
  context = await createTestApp();
}, 120_000);

afterAll(async () => {
  await context?.close();
});

describe('the dashboard, served by svc', () => {
  it('redirects / and /dashboard to /dashboard/', async () => {
    const root = await context.app.inject({ method: 'GET', url: '/' });
    expect(root.statusCode).toBe(302);
    expect(root.headers.location).toBe('/dashboard/');
    const bare = await context.app.inject({ method: 'GET', url: '/dashboard' });
    expect(bare.statusCode).toBe(301);
    expect(bare.headers.location).toBe('/dashboard/');
  });

  it('answers the page for any client route, uncached, under a CSP that allows no inline script and no framing', async () => {
    for (const url of ['/dashboard/', '/dashboard/threats', '/dashboard/mcp?server=1']) {
      const page = await context.app.inject({ method: 'GET', url });
      expect(page.statusCode, url).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.body).toContain('<div id="root"></div>');
      expect(page.headers['cache-control']).toBe('no-cache');
      const csp = String(page.headers['content-security-policy']);
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(page.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it('serves the hashed assets the page names with a year-long immutable cache', async () => {
    const index = readFileSync(join(DASHBOARD_ROOT, 'index.html'), 'utf8');
    const assets = [...index.matchAll(/(?:src|href)="(\/dashboard\/assets\/[^"]+)"/g)].map((match) => match[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const url of assets) {
      const asset = await context.app.inject({ method: 'GET', url });
      expect(asset.statusCode, url).toBe(200);
      expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(String(asset.headers['content-type'])).toMatch(/javascript|css/);
    }
  });

  it('keeps JSON 404s for a missing asset, a path outside the build and unknown API paths', async () => {
    for (const url of ['/dashboard/assets/index-missing.js', '/dashboard/assets/..%2f..%2fpackage.json', '/api/v1/dashboard', '/ui']) {
      const answer = await context.app.inject({ method: 'GET', url });
      expect(answer.statusCode, url).toBe(404);
      expect(answer.json().error.code, url).toBe('ROUTE_NOT_FOUND');
    }
  });

  it('says how to build the dashboard when it was not built, and still redirects /', async () => {
    const app = Fastify();
    await registerDashboard(app as unknown as AppInstance, '/nonexistent/dashboard/');
    const page = await app.inject({ method: 'GET', url: '/dashboard/overview' });
    expect(page.statusCode).toBe(503);
    expect(page.body).toContain('npm run build');
    expect((await app.inject({ method: 'GET', url: '/' })).statusCode).toBe(302);
    await app.close();
  });
});
