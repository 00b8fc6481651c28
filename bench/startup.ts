/**
 * `npm run bench -- startup [--quick]`: the compiled build (`node dist/cli.js serve`, what
 * `npm start` runs) against the TypeScript source through tsx (`node --import tsx src/cli.ts
 * serve`, what `npm start` ran before), interleaved round by round on one reused embedded
 * DATA_DIR: seconds from spawn to the first 200 on /health, and the server's RSS one second
 * later. Both are single processes, so the RSS is the server's own. Needs `npm run build` first.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test/helpers/net.ts';
import { percentile, repoRoot, round3 } from './lib.ts';

const variants = {
  compiled: ['--enable-source-maps', 'dist/cli.js', 'serve'],
  tsx: ['--import', 'tsx', 'src/cli.ts', 'serve'],
} as const;

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

async function startOnce(args: readonly string[], dataDir: string): Promise<{ seconds: number; rssMb: number }> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [...args], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warning' },
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited with ${child.exitCode}`);
      if (performance.now() - started > 180_000) throw new Error(`${args.join(' ')} did not answer within 180 s`);
      const ok = await fetch(`http://127.0.0.1:${port}/health`).then((response) => response.ok, () => false);
      if (ok) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const seconds = (performance.now() - started) / 1000;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    return { seconds, rssMb: rssMb(child.pid!) };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

export async function runStartupBench(options: { quick?: boolean } = {}): Promise<object> {
  if (!existsSync(join(repoRoot, 'dist', 'cli.js'))) return { skipped: 'run `npm run build` first' };
  const rounds = options.quick ? 3 : 5;
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-startup-'));
  const samples: Record<keyof typeof variants, { seconds: number[]; rssMb: number[] }> = { compiled: { seconds: [], rssMb: [] }, tsx: { seconds: [], rssMb: [] } };
  const ratios: number[] = [];
  try {
    await startOnce(variants.compiled, dataDir); // creates and migrates the data directory (not counted)
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (['compiled', 'tsx'] as const) : (['tsx', 'compiled'] as const);
      const result: Partial<Record<keyof typeof variants, { seconds: number; rssMb: number }>> = {};
      for (const name of order) {
        result[name] = await startOnce(variants[name], dataDir);
        samples[name].seconds.push(result[name].seconds);
        samples[name].rssMb.push(result[name].rssMb);
      }
      ratios.push(result.compiled!.seconds / result.tsx!.seconds);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  const median = (values: number[]) => round3(percentile([...values].sort((a, b) => a - b), 50));
  return {
    rounds,
    start_to_first_200_s: { compiled: median(samples.compiled.seconds), tsx: median(samples.tsx.seconds) },
    rss_mb_1s_after: { compiled: median(samples.compiled.rssMb), tsx: median(samples.tsx.rssMb) },
    start_ratio_compiled_over_tsx: median(ratios),
    samples,
  };
}
