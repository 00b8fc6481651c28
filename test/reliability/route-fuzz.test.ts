/**
 * Property-based fuzz over every route /openapi.json lists (issue #14): whatever the body, path
 * parameters and query, an answer is never a 5xx other than the documented dependency ones, and
 * every error has the catalogue's shape with the X-Request-ID as request_id. Bounded runs.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/platform/errors.ts';
import { createTestApp, type TestContext } from '../helpers/app.ts';
import { freshAddresses, throttled } from '../helpers/callers.ts';

let context: TestContext;
let admin: string;

/** 5xx a route may answer by design: no upstream configured / upstream or dependency down. */
const DOCUMENTED_5XX = new Set(['NO_PROVIDERS', 'UPSTREAM_AUTH_FAILED', 'UPSTREAM_ERROR', 'SERVICE_UNAVAILABLE', 'UPSTREAM_UNAVAILABLE', 'UPSTREAM_TIMEOUT']);
const RUNS_PER_ROUTE = 20;

interface Operation {
  method: string;
  path: string;
  bodyProperties: string[];
}

beforeAll(async () => {
  context = await createTestApp();
  admin = (await context.createOrg({ plan: 'enterprise' })).apiKey;
});
afterAll(async () => {
  await context.close();
});

const hostileString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom('\u0000', 'a\u0000b', '\uD800', '%00', '../../etc/passwd', "' OR 1=1 --", '<script>x</script>', '{{7*7}}', '${jndi:ldap://x}', 'sk-…', ''),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constant('x'.repeat(5_000)),
);
const hostileNumber = fc.oneof(fc.double(), fc.constantFrom(1e-300, -1e-300, 1e300, 2 ** 60, -1, 0, Number.MAX_SAFE_INTEGER), fc.integer());
const leaf = fc.oneof(hostileString, hostileNumber, fc.boolean(), fc.constant(null));
const value: fc.Arbitrary<unknown> = fc.oneof({ depthSize: 'small', maxDepth: 3 }, leaf, fc.array(leaf, { maxLength: 4 }), fc.dictionary(hostileString, leaf, { maxKeys: 4 }));

function bodyFor(operation: Operation): fc.Arbitrary<unknown> {
  const shaped =
    operation.bodyProperties.length === 0
      ? fc.dictionary(fc.string({ maxLength: 10 }), value, { maxKeys: 4 })
      : fc.record(Object.fromEntries(operation.bodyProperties.map((name) => [name, value])), { requiredKeys: [] });
  return fc.oneof(shaped, value);
}

/**
 * The compatible surfaces (/v1/…) answer in their API's own error shape, svc's code in
 * X-SVC-Error-Code: the code and request id they carry, when that shape is right; null elsewhere.
 */
function compatibleError(path: string, response: { json(): unknown; headers: Record<string, unknown> }): { code?: string; request_id?: string } | null {
  if (!path.startsWith('/v1/')) return null;
  const code = String(response.headers['x-svc-error-code']);
  const body = response.json() as { type?: string; request_id?: string; error?: { code?: string; type?: string; message?: string } };
  const requestId = String(response.headers['x-request-id']);
  if (path === '/v1/messages') return body.type === 'error' && typeof body.error?.type === 'string' && typeof body.error.message === 'string' ? { code, request_id: body.request_id } : {};
  return body.error?.code === code.toLowerCase() && typeof body.error.type === 'string' ? { code, request_id: requestId } : {};
}

describe('fuzzing every route of /openapi.json', () => {
  it('never answers a 5xx outside the documented dependency failures, and every error has the catalogue shape', async () => {
    const spec = (await context.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> } }>>;
    };
    const operations: Operation[] = [];
    for (const [path, methods] of Object.entries(spec.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
        if (path === '/api/v1/keys/{id}' && method === 'delete') continue; // could revoke the fuzzer's own key
        const schema = operation.requestBody?.content?.['application/json']?.schema;
        operations.push({ method: method.toUpperCase(), path, bodyProperties: Object.keys(schema?.properties ?? {}) });
      }
    }
    expect(operations.length).toBeGreaterThan(10);
    const failures: string[] = [];
    // Each call from an address of its own: the public routes are limited per address, and an
    // answer from the limiter would stand in for the route's answer to the input.
    const fresh = freshAddresses(80);
    for (const operation of operations) {
      await fc.assert(
        fc.asyncProperty(bodyFor(operation), fc.oneof(hostileString, fc.uuid()), fc.dictionary(fc.string({ maxLength: 8 }), hostileString, { maxKeys: 3 }), async (body, parameter, query) => {
          const path = operation.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(String(parameter).replace(/[\uD800-\uDFFF]/g, "x")).slice(0, 200) || 'x');
          const search = new URLSearchParams(query as Record<string, string>).toString();
          const response = await context.app.inject({
            method: operation.method as 'GET',
            url: search === '' ? path : `${path}?${search}`,
            headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
            ...(operation.method === 'GET' || operation.method === 'DELETE' ? {} : { payload: JSON.stringify(body) ?? 'null' }),
            remoteAddress: fresh(),
          });
          if (throttled(response)) failures.push(`${operation.method} ${operation.path} → 429: answered by a request limit, not the route`);
          if (response.statusCode < 400) return;
          const error = compatibleError(operation.path, response) ?? (response.json() as { error?: { code?: string; request_id?: string } }).error;
          const where = `${operation.method} ${operation.path} → ${response.statusCode} ${error?.code ?? '(no code)'}`;
          if (error?.code === undefined || !(error.code in ERRORS) || error.request_id !== response.headers['x-request-id']) failures.push(`${where}: not the error shape`);
          else if (response.statusCode >= 500 && !DOCUMENTED_5XX.has(error.code)) failures.push(`${where}: ${JSON.stringify(body).slice(0, 200)}`);
        }),
        { numRuns: RUNS_PER_ROUTE, seed: 1414 },
      );
    }
    expect(failures.slice(0, 20)).toEqual([]);
  }, 120_000);
});
