import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/platform/config.ts';

describe('configuration', () => {
  it('starts embedded (PGlite under DATA_DIR, memory cache, development) on an empty environment', () => {
    const config = loadConfig({});
    expect(config.embedded).toBe(true);
    expect(config.environment).toBe('development');
    expect(config.database).toEqual({ kind: 'pglite', dir: './data/pglite' });
    expect(config.cache).toEqual({ kind: 'memory' });
    expect(config.port).toBe(8080);
    expect(config.host).toBe('127.0.0.1');
    expect(config.features).toEqual({ mcpSecurity: true, aiGateway: true, geoBlocking: false, hipaaBaa: false, soc2Reports: false });
  });

  it('serves with one worker per core the process may use unless WORKERS says otherwise', () => {
    expect(loadConfig({}).workers).toBe(availableParallelism());
    expect(loadConfig({ WORKERS: '3' }).workers).toBe(3);
    expect(() => loadConfig({ WORKERS: '0' })).toThrow(ConfigError);
  });

  it('lets the heap grow 25% past its live set before a full collection unless HEAP_GROWING_PERCENT says otherwise', () => {
    expect(loadConfig({}).heapGrowingPercent).toBe(25);
    expect(loadConfig({ HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent).toBe(0);
    expect(loadConfig({ HEAP_GROWING_PERCENT: '100' }).heapGrowingPercent).toBe(100);
    expect(() => loadConfig({ HEAP_GROWING_PERCENT: '-5' })).toThrow(ConfigError);
    expect(() => loadConfig({ HEAP_GROWING_PERCENT: 'lots' })).toThrow(ConfigError);
  });

  it('requires storage and secrets in production and names every missing variable at once', () => {
    try {
      loadConfig({ ENVIRONMENT: 'production' });
      expect.unreachable('production without storage must not load');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const text = (error as ConfigError).problems.join('\n');
      for (const name of ['DATABASE_URL', 'REDIS_URL', 'SECRET_KEY', 'API_ENCRYPTION_KEY']) expect(text).toContain(name);
    }
  });

  it('defaults to production as soon as storage is configured', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgres://u:p@127.0.0.1/db' })).toThrow(ConfigError);
  });

  it('accepts the embedded schemes in production only when given explicitly', () => {
    const config = loadConfig({
      ENVIRONMENT: 'production',
      DATABASE_URL: 'pglite:memory',
      REDIS_URL: 'memory:',
      SECRET_KEY: 's'.repeat(32),
      API_ENCRYPTION_KEY: 'k'.repeat(32),
    });
    expect(config.database).toEqual({ kind: 'pglite', dir: null });
  });

  it('names each invalid value', () => {
    try {
      loadConfig({ PORT: 'eighty', LOG_LEVEL: 'loud', SECRET_KEY: 'short', FEATURE_GEO_BLOCKING: 'maybe', REDIS_URL: 'http://x', ENVIRONMENT: 'development' });
      expect.unreachable();
    } catch (error) {
      const problems = (error as ConfigError).problems.join('\n');
      for (const name of ['PORT', 'LOG_LEVEL', 'SECRET_KEY', 'FEATURE_GEO_BLOCKING', 'REDIS_URL']) expect(problems).toContain(name);
    }
  });

  it('is frozen', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.features)).toBe(true);
  });

  it('reads upstream keys from the per-provider variables', () => {
    const config = loadConfig({ OPENAI_API_KEY: 'sk-a', ANTHROPIC_API_KEY: 'sk-b', GATEWAY_MOCK_PROVIDER: 'false' });
    expect(config.providerEnvKeys).toEqual({ openai: 'sk-a', anthropic: 'sk-b' });
  });

  it('makes the built-in mock providers routable in development only, unless GATEWAY_MOCK_PROVIDER says otherwise', () => {
    const development = loadConfig({ OPENAI_API_KEY: 'sk-a' });
    expect(development.mockProvider).toBe(true);
    expect(development.providerEnvKeys).toEqual({ openai: 'sk-a', mock: 'mock', mock_backup: 'mock' });
    expect(loadConfig({ GATEWAY_MOCK_PROVIDER: 'false' }).providerEnvKeys).toEqual({});
    const staging = loadConfig({ ENVIRONMENT: 'staging', DATABASE_URL: 'pglite:memory', REDIS_URL: 'memory:' });
    expect(staging.mockProvider).toBe(false);
  });
});
