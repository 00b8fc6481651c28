// Child process for the gateway benchmark: svc with its full stack (auth, rate limit, budget,
// PII redaction in its default "redact" mode, request log line to /dev/null, metrics) and an
// Enterprise org whose OpenAI key points at the fake upstream (BENCH_UPSTREAM_BASE_URL).
import pino from 'pino';
import { buildApp } from '../src/http/build-app.ts';
import { loadConfig } from '../src/platform/config.ts';
import { resolveSecrets } from '../src/platform/secrets.ts';
import { createServices } from '../src/services.ts';

const config = resolveSecrets(
  loadConfig({
    ENVIRONMENT: 'development',
    DATABASE_URL: process.env.BENCH_DATABASE_URL ?? 'pglite:memory',
    REDIS_URL: process.env.BENCH_REDIS_URL ?? 'memory:',
    SECRET_KEY: 'bench-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz',
    API_ENCRYPTION_KEY: 'bench-encryption-key-0123456789-abcdefghijklmnopqrs',
    ALLOW_PRIVATE_TARGETS: 'true',
    CACHE_PREFIX: `bench:${process.pid}:`,
    LOG_LEVEL: 'info',
  }),
);
const services = await createServices(config, { logDestination: pino.destination({ dest: '/dev/null', sync: false, minLength: 4096 }) });
const app = await buildApp(config, services);
await app.listen({ port: 0, host: '127.0.0.1' });
const { org, apiKey } = await services.accounts.createOrg({ name: 'bench-gateway', plan: 'enterprise' });
await services.accounts.providerKeys.set(org.id, 'openai', 'sk-bench-upstream-key', process.env.BENCH_UPSTREAM_BASE_URL ?? null);
const address = app.server.address();
process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0, api_key: apiKey, org_id: org.id })}\n`);
process.on('SIGTERM', () => void app.close().then(() => services.close()).then(() => process.exit(0)));
