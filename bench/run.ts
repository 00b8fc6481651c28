/**
 * `npm run bench [-- name …] [-- --quick] [-- --definitions-only] [-- --latency-only] [-- --verification-only] [-- --fit]`: runs the benchmarks one after another and prints one
 * JSON line per benchmark on stdout. Each compares svc with a baseline measured in the same run
 * (a bare Fastify route, a direct upstream call, a peer gateway), because this machine is shared
 * and absolute times drift. Names: foundation, gateway,
 * gateway-phases (where one completion's time goes inside svc), gateway-profile (what svc's CPU
 * per completion is made of, beside the bare route; `--stream`: streamed completions), gateway-core (the completion logic without HTTP,
 * and what each completion's evidence adds), detection, detection-short (the T3 classifier on texts
 * with almost no prose), inspect (CPU per KB of new text for the default engine at 0.5–64 KB, before/after with
 * BENCH_BEFORE_DIR, and length drift per source), pii, lexicons (the PII name lexicons' heap and look-up time, packed against Sets), audit-webhooks, apisec, ml, mcp (`--profile`:
 * svc's added CPU per tools/call, part by part), startup (compiled build against tsx), memory (the
 * compiled server's RSS under 5 minutes of mixed load with the ML tiers loaded), verification, collector (sensor findings per second,
 * single and batches of 100, and the verification cost per finding), workers (WORKERS=1, 2, 4 on
 * PostgreSQL + Redis: BENCH_DATABASE_URL, BENCH_REDIS_URL), code-fp (ordinary source code from node_modules and the
 * system's Python library inspected as tool_output and as a pasted prompt: refusal and alert rates, and the same chunks
 * with an attack sentence planted in a comment).
 */
import { availableParallelism, loadavg } from 'node:os';

type Bench = (options: { quick?: boolean; definitionsOnly?: boolean; latencyOnly?: boolean; verificationOnly?: boolean; fit?: boolean; profile?: boolean }) => Promise<object>;

const benches: Record<string, () => Promise<Bench>> = {
  foundation: async () => (await import('./foundation.ts')).runFoundationBench,
  gateway: async () => (await import('./gateway.ts')).runGatewayBench,
  'gateway-phases': async () => (await import('./gateway-phases.ts')).runGatewayPhasesBench,
  'gateway-profile': async () => (await import('./gateway-profile.ts')).runGatewayProfileBench,
  'gateway-core': async () => (await import('./gateway-core.ts')).runGatewayCoreBench,
  detection: async () => (await import('./detection.ts')).runDetectionBench as Bench,
  'detection-short': async () => (await import('./detection-short.ts')).runDetectionShortBench,
  inspect: async () => (await import('./inspect.ts')).runInspectBench,
  lexicons: async () => (await import('./lexicons.ts')).runLexiconsBench,
  pii: async () => {
    const { runPiiBench, runPiiSpeedBench } = await import('./pii.ts');
    return async (options) => {
      const quality = runPiiBench();
      return quality === null ? { skipped: 'needs ../shared/datasets/pii' } : { ...quality, speed: runPiiSpeedBench(options.quick === true ? 2 : 5) };
    };
  },
  'audit-webhooks': async () => (await import('./audit-webhooks.ts')).runAuditWebhooksBench,
  verification: async () => (await import('./verification.ts')).runVerificationBench,
  apisec: async () => (await import('./apisec.ts')).runApiSecurityBench,
  ml: async () => (await import('../src/detection/ml/bench.ts')).runMlBench as Bench,
  mcp: async () => (await import('./mcp.ts')).runMcpBench,
  startup: async () => (await import('./startup.ts')).runStartupBench,
  memory: async () => (await import('./startup.ts')).runMemoryUnderLoad,
  collector: async () => (await import('./collector.ts')).runCollectorBench,
  workers: async () => (await import('./workers.ts')).runWorkersBench,
  'cold-start': async () => (await import('./cold-start.ts')).runColdStartBench,
  'code-fp': async () => (await import('./code-fp.ts')).runCodeFpBench as Bench,
};

const args = process.argv.slice(2);
const quick = args.includes('--quick');
// verification: `--fit` also prints the grounding calibration fitted on every development record (src/verification/grounding-calibration.ts).
const fit = args.includes('--fit');
// mcp: `--definitions-only` measures definition detection without the latency part.
const definitionsOnly = args.includes('--definitions-only');
// mcp: `--latency-only` measures the added latency per tools/call without the definition rates.
const latencyOnly = args.includes('--latency-only');
// mcp: `--profile` also profiles a block of direct and of proxied calls: svc's added CPU per call, part by part.
const profile = args.includes('--profile');
// gateway: `--verification-only` runs only the verification phase (paired, verification on vs off).
const verificationOnly = args.includes('--verification-only');
const selected = args.filter((arg) => !arg.startsWith('--'));
const names = selected.length > 0 ? selected : Object.keys(benches);
let failed = false;
for (const name of names) {
  const load = benches[name];
  if (load === undefined) {
    process.stderr.write(`unknown benchmark "${name}"; known: ${Object.keys(benches).join(', ')}\n`);
    process.exitCode = 2;
    continue;
  }
  const started = Date.now();
  // The 1-, 5- and 15-minute load averages at the start and the end: every figure is printed beside them.
  const loadAtStart = loadavg().map((value) => Math.round(value * 100) / 100);
  try {
    const result = await (await load())({ quick, definitionsOnly, latencyOnly, verificationOnly, fit, profile });
    const loadAverage = { start: loadAtStart, end: loadavg().map((value) => Math.round(value * 100) / 100), cores: availableParallelism() };
    process.stdout.write(`${JSON.stringify({ ...result, bench: name, seconds: Math.round((Date.now() - started) / 100) / 10, load_average: loadAverage })}\n`);
  } catch (error) {
    failed = true;
    process.stdout.write(`${JSON.stringify({ bench: name, error: error instanceof Error ? error.message : String(error) })}\n`);
  }
}
if (failed) process.exitCode = 1;
