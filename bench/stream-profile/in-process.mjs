// svc over a checkout's dist/ (SVC_DIR, default this checkout) in this process, for the counters
// of bench/stream-profile (alloc.mjs, db-count.mjs): embedded PGlite in a temporary folder, the
// `memory:` cache, one Enterprise org whose OpenAI key points at the fast fake upstream
// (UPSTREAM_BASE_URL, e.g. from `npx tsx bench/gateway-upstream.ts`). `complete()` sends the
// gateway benchmark's JSON completion through app.inject and throws unless it answers 200.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export async function startInProcess(prefix) {
  const dir = resolve(process.env.SVC_DIR ?? '.');
  const { default: pino } = await import(join(dir, 'node_modules/pino/pino.js'));
  const { buildApp } = await import(join(dir, 'dist/http/build-app.js'));
  const { createServices } = await import(join(dir, 'dist/services.js'));
  const { loadConfig } = await import(join(dir, 'dist/platform/config.js'));
  const { resolveSecrets } = await import(join(dir, 'dist/platform/secrets.js'));
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  const config = resolveSecrets(loadConfig({ ENVIRONMENT: 'development', SECRET_KEY: 'bench-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz', API_ENCRYPTION_KEY: 'bench-encryption-key-0123456789-abcdefghijklmnopqrs',
    DATABASE_URL: `pglite:${dataDir}/pglite`, DATA_DIR: dataDir, REDIS_URL: 'memory:', ALLOW_PRIVATE_TARGETS: 'true', CACHE_PREFIX: `bench:${process.pid}:`, LOG_LEVEL: 'info' }));
  const services = await createServices(config, { logDestination: pino.destination({ dest: '/dev/null', sync: false, minLength: 4096 }) });
  const app = await buildApp(config, services);
  const { org, apiKey } = await services.accounts.createOrg({ name: 'bench', plan: 'enterprise' });
  await services.accounts.providerKeys.set(org.id, 'openai', 'sk-bench-upstream-key', process.env.UPSTREAM_BASE_URL);
  const body = JSON.stringify({ provider: 'openai', model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Summarize in one sentence why keep-alive connections matter for API gateways.' }], max_tokens: 64 });
  const complete = async () => {
    const response = await app.inject({ method: 'POST', url: '/api/v1/gateway/completions', headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` }, payload: body });
    if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}: ${response.body.slice(0, 300)}`);
  };
  const close = async () => {
    await app.close();
    await services.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  return { services, complete, close };
}
