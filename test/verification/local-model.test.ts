/**
 * Grounding tier 2, the local model: its configuration, the startup errors when the directory or
 * the optional package is missing (never a download), and the tier itself through the
 * composition root's seam (ServiceOptions.verification.tiers.localModel) on the guard API — it
 * is asked only about claims in the uncertain band, its answer changes the verdict, and a model
 * past its per-claim budget or failing leaves the lexical verdict and says so.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/platform/config.ts';
import { loadGroundingModel, passagesFor, resolvePolicy, runVerification, type GroundingModel } from '../../src/verification/index.ts';
import { entailmentIndex } from '../../src/verification/local-model.ts';
import { createTestApp, createTestServices, type TestContext } from '../helpers/app.ts';

const SOURCES = ['The bridge opened in 1932 and carries eight lanes of traffic. It was designed by the city engineer and painted grey.'];
/** Three claims: one the sources state (lexical score 0), two in the default uncertain band [0.35, 0.65). */
const MIXED = 'The bridge opened in 1932. The bridge was designed by Smith. The bridge carries traffic and tourists love walking across it.';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig({ ENVIRONMENT: 'development', ...env });
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
}

describe('grounding model configuration', () => {
  it('is off by default and reads a directory with a per-claim budget (250 ms unless set)', () => {
    expect(loadConfig({ ENVIRONMENT: 'development' }).verificationGroundingModel).toBeNull();
    expect(loadConfig({ ENVIRONMENT: 'development', VERIFICATION_GROUNDING_MODEL_DIR: '/models/nli' }).verificationGroundingModel).toEqual({ dir: '/models/nli', timeoutMs: 250 });
    expect(loadConfig({ ENVIRONMENT: 'development', VERIFICATION_GROUNDING_MODEL_DIR: './nli', VERIFICATION_GROUNDING_MODEL_TIMEOUT_MS: '80' }).verificationGroundingModel).toEqual({ dir: './nli', timeoutMs: 80 });
  });

  it('refuses a budget out of range, a URL instead of a directory, and a budget without a directory', () => {
    expect(problemsOf({ VERIFICATION_GROUNDING_MODEL_DIR: '/models/nli', VERIFICATION_GROUNDING_MODEL_TIMEOUT_MS: '5' }).some((problem) => problem.startsWith('VERIFICATION_GROUNDING_MODEL_TIMEOUT_MS'))).toBe(true);
    expect(problemsOf({ VERIFICATION_GROUNDING_MODEL_DIR: 'https://huggingface.co/some/model' }).some((problem) => problem.startsWith('VERIFICATION_GROUNDING_MODEL_DIR'))).toBe(true);
    expect(problemsOf({ VERIFICATION_GROUNDING_MODEL_TIMEOUT_MS: '100' }).some((problem) => problem.startsWith('VERIFICATION_GROUNDING_MODEL_TIMEOUT_MS'))).toBe(true);
  });
});

describe('loading the grounding model', () => {
  let scratch: string;
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'svc-grounding-model-'));
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('stops with dir_missing when the directory does not exist', async () => {
    await expect(loadGroundingModel(join(scratch, 'absent'), { timeoutMs: 100 })).rejects.toMatchObject({ code: 'GROUNDING_MODEL_UNAVAILABLE', reason: 'dir_missing' });
  });

  it('stops with model_files_missing when the directory holds no ONNX model', async () => {
    const empty = join(scratch, 'empty');
    mkdirSync(empty);
    writeFileSync(join(empty, 'config.json'), '{}');
    await expect(loadGroundingModel(empty, { timeoutMs: 100 })).rejects.toMatchObject({ code: 'GROUNDING_MODEL_UNAVAILABLE', reason: 'model_files_missing' });
  });

  it('stops with package_missing when @huggingface/transformers is not installed (load_failed on these dummy files when it is)', async () => {
    const dir = join(scratch, 'dummy');
    mkdirSync(join(dir, 'onnx'), { recursive: true });
    writeFileSync(join(dir, 'config.json'), '{"id2label":{"0":"entailment","1":"neutral","2":"contradiction"}}');
    writeFileSync(join(dir, 'tokenizer.json'), '{}');
    writeFileSync(join(dir, 'onnx', 'model.onnx'), 'not a model');
    let installed = true;
    try {
      createRequire(import.meta.url).resolve('@huggingface/transformers');
    } catch {
      installed = false;
    }
    await expect(loadGroundingModel(dir, { timeoutMs: 100 })).rejects.toMatchObject({ code: 'GROUNDING_MODEL_UNAVAILABLE', reason: installed ? 'load_failed' : 'package_missing' });
  });

  it('refuses to start svc when the configured directory is missing', async () => {
    await expect(createTestServices({ env: { VERIFICATION_GROUNDING_MODEL_DIR: join(scratch, 'nowhere') } })).rejects.toMatchObject({ code: 'GROUNDING_MODEL_UNAVAILABLE', reason: 'dir_missing' });
  });

  it('makes `svc serve` exit 1 with one GROUNDING_MODEL_UNAVAILABLE line, no stack trace, and the data directory lock released', () => {
    const dataDir = join(scratch, 'serve-data');
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve', '--json'], {
      cwd: resolve(import.meta.dirname, '../..'),
      env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warning', DATA_DIR: dataDir, PORT: '0', VERIFICATION_GROUNDING_MODEL_DIR: join(scratch, 'no-model') },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(result.status).toBe(1);
    const error = JSON.parse(result.stderr.trim().split('\n').filter((line) => line.startsWith('{')).at(-1) ?? 'null')?.error as { code: string; reason: string } | undefined;
    expect(error).toMatchObject({ code: 'GROUNDING_MODEL_UNAVAILABLE', reason: 'dir_missing' });
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(join(dataDir, 'svc.lock'))).toBe(false);
  }, 150_000);

  it('is refused by the cluster primary before it forks workers (WORKERS > 1 on shared storage, never reached)', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve', '--json'], {
      cwd: resolve(import.meta.dirname, '../..'),
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        LOG_LEVEL: 'warning',
        ENVIRONMENT: 'development',
        DATABASE_URL: 'postgres://svc:svc@127.0.0.1:1/unreachable',
        REDIS_URL: 'redis://127.0.0.1:1',
        SECRET_KEY: 'grounding-model-test-secret-key-0123456789',
        API_ENCRYPTION_KEY: 'grounding-model-test-encryption-key-012345',
        WORKERS: '2',
        PORT: '0',
        VERIFICATION_GROUNDING_MODEL_DIR: join(scratch, 'no-model'),
      },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(result.status).toBe(1);
    const error = JSON.parse(result.stderr.trim().split('\n').filter((line) => line.startsWith('{')).at(-1) ?? 'null')?.error as { code: string; reason: string } | undefined;
    expect(error).toMatchObject({ code: 'GROUNDING_MODEL_UNAVAILABLE', reason: 'dir_missing' });
    // Once, from the primary: no worker was forked to fail in turn.
    expect(result.stderr.split('\n').filter((line) => line.includes('"GROUNDING_MODEL_UNAVAILABLE"'))).toHaveLength(1);
  }, 150_000);

  it('finds the entailment class of MNLI-style labels only', () => {
    expect(entailmentIndex({ 0: 'contradiction', 1: 'entailment', 2: 'neutral' })).toBe(1);
    expect(entailmentIndex({ 0: 'ENTAILMENT', 1: 'NEUTRAL', 2: 'CONTRADICTION' })).toBe(0);
    expect(entailmentIndex({ 0: 'not_entailment', 1: 'entailment' })).toBe(1);
    expect(entailmentIndex({ 0: 'LABEL_0', 1: 'LABEL_1' })).toBeNull();
  });

  it('scores a claim against the source passages that share most of its words, in bounded windows', () => {
    const filler = 'Cargo ships unload containers at the northern quay every morning. '.repeat(40);
    const passages = passagesFor('The bridge carries eight lanes.', [filler, `${filler} The bridge carries eight lanes of traffic.`]);
    expect(passages.length).toBeLessThanOrEqual(4);
    expect(passages[0]).toContain('eight lanes');
    for (const passage of passages) expect(passage.length).toBeLessThanOrEqual(1_200);
  });
});

describe('grounding tier 2 through the composition root', () => {
  const asked: string[] = [];
  let behaviour: (claim: string) => Promise<number> = async () => 0.05;
  const model: GroundingModel = {
    id: 'test-nli',
    timeoutMs: 100,
    score: (claim) => {
      asked.push(claim);
      return behaviour(claim);
    },
  };
  let context: TestContext;
  let headers: Record<string, string>;
  beforeAll(async () => {
    context = await createTestApp({ services: { verification: { tiers: { localModel: model } } } });
    const { apiKey } = await context.createOrg();
    headers = { authorization: `Bearer ${apiKey}` };
  });
  afterAll(async () => {
    await context?.close();
  });

  const verify = async (response: string, policy?: Record<string, unknown>) => {
    const answer = await context.app.inject({ method: 'POST', url: '/api/v1/verify', headers, payload: { response, sources: SOURCES, ...(policy === undefined ? {} : { policy }) } });
    expect(answer.statusCode).toBe(200);
    return answer.json().layers.grounding as { verdict: string; findings: Array<{ reason: string }>; info: Record<string, unknown> };
  };

  it('asks the model only about the uncertain claims, and its "entailed" turns a lexical failure into a pass', async () => {
    const lexical = await runVerification({ content: MIXED, finishReason: 'stop', sources: SOURCES }, resolvePolicy());
    expect(lexical.layers.grounding.verdict).toBe('fail');
    asked.length = 0;
    behaviour = async () => 0.05;
    const grounding = await verify(MIXED);
    expect(grounding.verdict).toBe('pass');
    expect(asked).toEqual(['The bridge was designed by Smith.', 'The bridge carries traffic and tourists love walking across it.']);
    expect(grounding.info).toMatchObject({ tiers: ['lexical', 'local_model'], local_model: { model: 'test-nli', outcome: 'answered', claims: 2, scored: 2 } });
  });

  it('turns a lexical pass into a failure with a finding when the model says the claim is not entailed', async () => {
    const content = 'The bridge opened in 1932 and carries eight lanes of traffic, and it was designed by the city engineer and painted grey. Smith designed it.';
    const band = { grounding: { judge: { band: [0.1, 0.65] } } };
    behaviour = async () => 0.05;
    expect((await verify(content, band)).verdict).toBe('pass');
    behaviour = async () => 0.92;
    const grounding = await verify(content, band);
    expect(grounding.verdict).toBe('fail');
    expect(grounding.findings.length).toBeGreaterThan(0);
  });

  it('keeps the lexical verdict when the model overruns its per-claim budget, skips the remaining claims, and says so', async () => {
    asked.length = 0;
    behaviour = () => new Promise((resolve) => setTimeout(() => resolve(0.05), 400));
    const grounding = await verify(MIXED);
    expect(grounding.verdict).toBe('fail');
    expect(asked).toHaveLength(1);
    expect(grounding.info.local_model).toMatchObject({ outcome: 'timed_out', claims: 2, scored: 0, timed_out: 1, not_asked: 1, budget_ms: 100 });
  });

  it('keeps the lexical verdict when the model fails, and says so', async () => {
    behaviour = async () => {
      throw new Error('inference failed');
    };
    const grounding = await verify(MIXED);
    expect(grounding.verdict).toBe('fail');
    expect(grounding.info.local_model).toMatchObject({ outcome: 'failed', failed: 2, scored: 0 });
  });

  it('is not asked when the request has no sources', async () => {
    asked.length = 0;
    const answer = await context.app.inject({ method: 'POST', url: '/api/v1/verify', headers, payload: { response: MIXED } });
    expect(answer.json().layers.grounding.verdict).toBe('skipped');
    expect(asked).toHaveLength(0);
  });
});
