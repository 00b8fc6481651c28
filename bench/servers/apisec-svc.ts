// svc with a protected gateway in block mode in front of BENCH_UPSTREAM_BASE_URL (the full
// traffic path: routing, health state, inspection by the detection engine, T5, bots, analyzer,
// response policy, pooled forwarding, request log line, metrics). Bot policy allows every class
// so the detection pass measures detection, not the benchmark client's user agent. Prints the
// port and the gateway id.
import { buildApp } from '../../src/http/build-app.ts';
import { createServices } from '../../src/services.ts';
import { benchConfig, discardedLogs } from './svc-config.ts';

const config = benchConfig({
  DATABASE_URL: process.env.BENCH_DATABASE_URL ?? 'pglite:memory',
  REDIS_URL: process.env.BENCH_REDIS_URL ?? 'memory:',
  ALLOW_PRIVATE_TARGETS: 'true',
  CACHE_PREFIX: `bench:${process.pid}:`,
  LOG_LEVEL: 'info',
});
const services = await createServices(config, { logDestination: discardedLogs() });
const app = await buildApp(config, services);
await app.listen({ port: 0, host: '127.0.0.1' });
const { org } = await services.accounts.createOrg({ name: 'bench', plan: 'enterprise' });
const core = services.apisec;
const gateway = await core.create(org.id, 'bench', {
  name: 'bench',
  backend_url: process.env.BENCH_UPSTREAM_BASE_URL ?? 'http://127.0.0.1:1',
  mode: 'block',
  bot_policy: { human: 'allow', automation: 'allow', bot: 'allow', scraper: 'allow', scanner: 'allow' },
  health_check: null,
});
const address = app.server.address();
process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0, gateway_id: gateway.id })}\n`);
process.on('SIGTERM', () => void app.close().then(() => services.close()).then(() => process.exit(0)));
