// What every benchmark that runs svc in-process shares: a development config with fixed bench
// secrets (the environment's own variables are not read), and log lines sent to /dev/null so
// the terminal is never the bottleneck.
import pino from 'pino';
import { loadConfig } from '../../src/platform/config.ts';
import type { ResolvedConfig } from '../../src/platform/config.ts';
import { resolveSecrets } from '../../src/platform/secrets.ts';

/** svc's config for a benchmark: `env` adds to (or replaces) the development defaults and bench secrets. */
export function benchConfig(env: Record<string, string>): ResolvedConfig {
  return resolveSecrets(
    loadConfig({
      ENVIRONMENT: 'development',
      SECRET_KEY: 'bench-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz',
      API_ENCRYPTION_KEY: 'bench-encryption-key-0123456789-abcdefghijklmnopqrs',
      ...env,
    }),
  );
}

/** A log destination that discards, buffered (what the bench servers pass to createServices). */
export function discardedLogs(): pino.DestinationStream {
  return pino.destination({ dest: '/dev/null', sync: false, minLength: 4096 });
}
