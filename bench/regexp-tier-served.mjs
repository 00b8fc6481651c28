// Served-process V8 flag probe (docs/benchmarks.md, "V8's regexp tier-up in a served process").
// Starts one `node [flags] dist/cli.js serve` per config (WORKERS=1, LOG_LEVEL=error, its own copy
// of a DATA_DIR that holds an org), warms each up with distinct 4 KB benign prompts, then runs
// interleaved rounds (the order rotated each round) of distinct 4 KB benign prompts on
// /api/v1/inspect, one at a time. CPU per request from /proc/PID/stat (utime + stime), RSS from
// /proc/PID/status, and `--trace-regexp-tier-up` lines counted per phase. Linux only; needs `npm
// run build` and ../shared/datasets.
//   DATA_DIR=$(mktemp -d) node dist/cli.js org create --name b --plan enterprise --json   # api_key
//   node bench/regexp-tier-served.mjs "$DATA_DIR" "$KEY" \
//     '[{"name":"default","flags":[]},{"name":"no-tier-up","flags":["--no-regexp-tier-up"]}]' ROUNDS PER_ROUND WARM
// RAW=prefix writes each server's raw stdout/stderr to prefix-NAME.log.
import { spawn } from 'node:child_process';
import { readFileSync, mkdtempSync, cpSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [, , templateDir, apiKey, configsJson, roundsArg, perRoundArg, warmArg] = process.argv;
const configs = JSON.parse(configsJson); // [{name, flags:[...]}]
const ROUNDS = Number(roundsArg ?? 4), PER = Number(perRoundArg ?? 300), WARM = Number(warmArg ?? 400);
const DS = path.join(root, '../shared/datasets/prompt_injection');
const pool = [];
for (const s of ['alpaca_data_5k', 'code_alpaca_2k', 'gpteacher_roleplay', 'gsm8k_questions', 'gpteacher_toolformer'])
  for (const line of readFileSync(`${DS}/${s}.jsonl`, 'utf8').split('\n')) if (line) pool.push(String(JSON.parse(line).text));
let cursor = 0;
const seen = new Set();
const make = (size) => { for (;;) { let t = ''; let c = cursor; cursor += 3; while (t.length < size) t += `${pool[c++ % pool.length]}\n\n`; t = t.slice(0, size); if (!seen.has(t)) { seen.add(t); return t; } } };
const warmTexts = Array.from({ length: WARM }, () => make(4096));
const roundTexts = Array.from({ length: ROUNDS }, () => Array.from({ length: PER }, () => make(4096)));
console.log(`pool ${pool.length} records, ${seen.size} distinct texts, cursor ${cursor}`);
const load = () => loadavg().map((v) => v.toFixed(2)).join(' ');
const ticks = (pid) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return Number(f[11]) + Number(f[12]); };
const rss = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
const servers = [];
let port = 7280;
for (const c of configs) {
  const dir = mkdtempSync(path.join(tmpdir(), 'rx21-d-'));
  cpSync(templateDir, dir, { recursive: true });
  const p = port++;
  const child = spawn(process.execPath, [...c.flags, path.join(root, 'dist/cli.js'), 'serve'], { env: { ...process.env, DATA_DIR: dir, WORKERS: '1', LOG_LEVEL: 'error', PORT: String(p), HOST: '127.0.0.1' }, cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  const s = { ...c, port: p, child, lines: { bytecode: 0, needs: 0, native: 0, forcing: 0 }, objs: new Map(), raw: [] };
  let buf = '';
  const onData = (d) => { buf += d; let i; while ((i = buf.indexOf('\n')) >= 0) { const l = buf.slice(0, i); buf = buf.slice(i + 1); s.raw.push(l);
    if (l.includes('bytecode size')) s.lines.bytecode++; else if (l.includes('needs tier-up')) s.lines.needs++; else if (l.includes('native code size')) { s.lines.native++; const a = /0x[0-9a-f]+/.exec(l)?.[0]; s.objs.set(a, (s.objs.get(a) ?? 0) + 1); } else if (l.includes('Forcing tier-up')) s.lines.forcing++; else if (l.trim()) process.stderr.write(`[${c.name}] ${l}\n`); } };
  child.stdout.setEncoding('utf8').on('data', onData); child.stderr.setEncoding('utf8').on('data', onData);
  servers.push(s);
}
async function ready(s) { for (let i = 0; i < 600; i++) { try { const r = await fetch(`http://127.0.0.1:${s.port}/health`); if (r.status < 500) return; } catch {} await new Promise((r) => setTimeout(r, 500)); } throw new Error(`${s.name} not ready`); }
async function send(s, texts) { for (const content of texts) { const r = await fetch(`http://127.0.0.1:${s.port}/api/v1/inspect`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` }, body: JSON.stringify({ kind: 'prompt', content }) }); if (r.status !== 200) throw new Error(`${s.name}: ${r.status} ${await r.text()}`); await r.arrayBuffer(); } }
try {
  await Promise.all(servers.map(ready));
  console.log(`ready, load ${load()}`);
  for (const s of servers) { await send(s, warmTexts); s.raw.push('=== warm-up done'); }
  console.log(`warm-up ${WARM} done, load ${load()}; trace lines so far: ${servers.map((s) => `${s.name} ${JSON.stringify(s.lines)}`).join('; ')}`);
  const res = Object.fromEntries(servers.map((s) => [s.name, []]));
  for (let r = 0; r < ROUNDS; r++) {
    const order = servers.map((_, i) => servers[(i + r) % servers.length]);
    for (const s of order) {
      const before = { ...s.lines }; const t0 = ticks(s.child.pid); const w0 = performance.now();
      s.raw.push(`=== round ${r}`); await send(s, roundTexts[r]);
      const us = ((ticks(s.child.pid) - t0) * 10_000) / PER; const wall = (performance.now() - w0) / PER;
      const d = Object.fromEntries(Object.keys(s.lines).map((k) => [k, s.lines[k] - before[k]]));
      res[s.name].push(us);
      console.log(`round ${r} ${s.name}: cpu ${us.toFixed(0)} µs/req, wall ${wall.toFixed(2)} ms/req, trace ${JSON.stringify(d)} (${(d.bytecode / PER).toFixed(2)} bytecode compiles/req, ${(d.native / PER).toFixed(2)} native/req), rss ${rss(s.child.pid).toFixed(0)} MB, load ${load()}`);
    }
  }
  const med = (a) => { const b = [...a].sort((x, y) => x - y); return b[Math.floor(b.length / 2)]; };
  for (const s of servers) { const many = [...s.objs].filter(([, n]) => n > 1); if (s.objs.size) console.log(`${s.name}: native compiles by object: ${s.objs.size} objects, ${many.length} compiled more than once: ${many.slice(0, 12).map(([a, n]) => `${a}×${n}`).join(' ')}`); }
  for (const s of servers) console.log(`${s.name}: cpu µs/req rounds ${res[s.name].map((x) => x.toFixed(0)).join(' ')} median ${med(res[s.name]).toFixed(0)}; rss ${rss(s.child.pid).toFixed(0)} MB`);
  const base = res[servers[0].name];
  for (const s of servers.slice(1)) { const r = res[s.name].map((x, i) => base[i] / x); console.log(`${servers[0].name} ÷ ${s.name} per round: ${r.map((x) => x.toFixed(2)).join(' ')}; median ${med(r).toFixed(3)}, ${r.filter((x) => x > 1).length}/${r.length} above 1; ratio of sums ${(base.reduce((a, b) => a + b) / res[s.name].reduce((a, b) => a + b)).toFixed(3)}`); }
  console.log(`end load ${load()}`);
} finally { for (const s of servers) { s.child.kill('SIGTERM'); if (process.env.RAW) (await import('node:fs')).writeFileSync(`${process.env.RAW}-${s.name}.log`, s.raw.join('\n')); } }
