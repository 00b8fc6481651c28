import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteAccess } from '../../src/http/build-app.ts';
import { createTestApp, type TestContext } from '../helpers/app.ts';

let context: TestContext;
beforeAll(async () => {
  context = await createTestApp();
});
afterAll(async () => context.close());

describe('docs/api.md', () => {
  it('lists every endpoint with the scope it enforces', () => {
    const routes = (context.app as unknown as { routeAccess: RouteAccess[] }).routeAccess
      .filter((route) => route.url.startsWith('/api/') || route.url.startsWith('/v1/') || route.url.startsWith('/health') || route.url === '/metrics' || route.url === '/openapi.json')
      .map((route) => `| ${route.method} | \`${route.url}\` | ${route.access} |`)
      .sort();
    const documented = readFileSync(resolve(import.meta.dirname, '../../docs/api.md'), 'utf8')
      .split('\n')
      .filter((line) => /^\| (GET|POST|PUT|PATCH|DELETE) \|/.test(line))
      .sort();
    expect(documented, `docs/api.md should list exactly:\n${routes.join('\n')}`).toEqual(routes);
  });
});
