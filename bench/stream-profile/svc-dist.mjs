// svc for bench/stream-profile/drive.ts: bench/servers/svc.ts's set-up over a checkout's dist/ (SVC_DIR), plain node; SIGUSR2 starts and then stops V8's sampling profiler (PROFILE_OUT).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const dir = process.env.SVC_DIR;
const { default: pino } = await import(join(dir, 'node_modules/pino/pino.js'));
const { buildApp } = await import(join(dir, 'dist/http/build-app.js'));
const { createServices } = await import(join(dir, 'dist/services.js'));
const { loadConfig } = await import(join(dir, 'dist/platform/config.js'));
const { resolveSecrets } = await import(join(dir, 'dist/platform/secrets.js'));
const { limitHeapGrowth } = await import(join(dir, 'dist/platform/heap-growth.js'));
const dataDir = mkdtempSync(join(tmpdir(), 'svc-ss40-'));
const config = resolveSecrets(loadConfig({ ENVIRONMENT: 'development', SECRET_KEY: 'bench-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz', API_ENCRYPTION_KEY: 'bench-encryption-key-0123456789-abcdefghijklmnopqrs',
  DATABASE_URL: `pglite:${dataDir}/pglite`, DATA_DIR: dataDir, REDIS_URL: 'memory:', ALLOW_PRIVATE_TARGETS: 'true', CACHE_PREFIX: `bench:${process.pid}:`, LOG_LEVEL: 'info' }));
limitHeapGrowth(config.heapGrowingPercent);
const services = await createServices(config, { logDestination: pino.destination({ dest: '/dev/null', sync: false, minLength: 4096 }) });
const app = await buildApp(config, services);
await app.listen({ port: 0, host: '127.0.0.1' });
const { org, apiKey } = await services.accounts.createOrg({ name: 'bench', plan: 'enterprise' });
await services.accounts.providerKeys.set(org.id, 'openai', 'sk-bench-upstream-key', process.env.BENCH_UPSTREAM_BASE_URL);
process.stdout.write(`${JSON.stringify({ port: app.server.address().port, api_key: apiKey })}\n`);
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
let session = null;
process.on('SIGUSR2', async () => {
  if (session === null) { session = new Session(); session.connect(); await session.post('Profiler.enable'); await session.post('Profiler.setSamplingInterval', { interval: 100 }); await session.post('Profiler.start'); }
  else { const { profile } = await session.post('Profiler.stop'); writeFileSync(process.env.PROFILE_OUT, JSON.stringify(profile)); session.disconnect(); session = null; process.stdout.write('profile written\n'); }
});
process.on('SIGTERM', () => void app.close().then(() => services.close()).then(() => { rmSync(dataDir, { recursive: true, force: true }); process.exit(0); }));
