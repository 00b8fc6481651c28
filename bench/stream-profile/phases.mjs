// bench/stream-profile/drive.ts's profiles as a phase table (usage: node phases.mjs <profile> <completions> [main-thread µs]):
// each busy sample goes to the phase of the nearest svc frame (a checkout's dist/), except socket
// writes, GC, (program), PGlite (WebAssembly and its JS) counted apart; no svc frame -> leaf's package/node.
import { readFileSync } from 'node:fs';
const [file, nArg, mainUs] = process.argv.slice(2);
const prof = JSON.parse(readFileSync(file, 'utf8')); const n = Number(nArg);
const byId = new Map(prof.nodes.map((x) => [x.id, x])); const parent = new Map();
for (const x of prof.nodes) for (const c of x.children ?? []) parent.set(c, x.id);
const rules = [
  [/^gateway\/relay\.js (sseLine|end|start|write|delta|error|toolCall)$|^gateway\/relay\.js SseWriter/, 'svc stream: relay writes (encoder, final event JSON, writeHead, res.write/end and node under them)'],
  [/^gateway\/relay\.js/, 'svc stream: relay loop (pipe, drain, flush, finish, openStream)'],
  [/^gateway\/streaming\/|^gateway\/providers\/shared\/(openai-chat\.js (step|done|parseOpenAiStream)|common\.js)|^gateway\/registry\.js (next|nextReady|pull)/, 'svc stream: upstream stream parse (SSE split, chunk JSON.parse, events)'],
  [/^verification\/stream-guard|^verification\/service\.js (stream|end|push)/, 'svc stream: stream verification guard (push, end, window check)'],
  [/^verification\//, 'svc: verification layers and evidence (runVerification, provenance, digests)'],
  [/^gateway\/(http-client|registry|attempts|breaker|providers)/, 'svc: upstream call (request build, dispatch, headers, attempts)'],
  [/^detection\/behaviour/, 'svc: T5 behaviour profile'],
  [/^detection\//, 'svc: inspection (prompt screen, response filter)'],
  [/^gateway\/(admission|budget|routing|keys|behaviour)/, 'svc: admission, routing, budget reservation'],
  [/^gateway\/(settlement|pricing)/, 'svc: settlement and cost'],
  [/^gateway\/pii/, 'svc: PII'],
  [/^gateway\/(routes|content|schemas|service|cancel)|^compliance\//, 'svc: route, validation, serve, take-over'],
  [/^platform\/(logger|metrics)|^http\/metrics/, 'svc: logging and metrics'],
  [/^platform\/db|^audit\//, 'svc: database calls on svc side'],
  [/^(accounts|platform\/(rate-limit|cache|auth))/, 'svc: auth and rate-limit stores'],
  [/^http\//, 'svc: http hooks (onRequest, onResponse, body parser)'],
  [/./, 'svc: other'],
];
const phase = new Map(); let busy = 0;
const add = (k, d) => phase.set(k, (phase.get(k) ?? 0) + d);
for (let i = 0; i < prof.samples.length; i++) {
  const id = prof.samples[i]; const f = byId.get(id).callFrame; const d = prof.timeDeltas[i] ?? 0;
  if (f.functionName === '(idle)' || (f.functionName === 'dispatch' && f.url === '')) continue;
  busy += d;
  if (f.functionName === '(garbage collector)') { add('V8 collector (main thread)', d); continue; }
  if (f.functionName === '(program)') { add('V8 (program)', d); continue; }
  if (f.functionName === 'writev' || f.functionName.startsWith('write') && f.url === '') { add('socket writes (writev: the client answer, the upstream request)', d); continue; }
  if (f.functionName.startsWith('wasm-function') || f.url.includes('pglite')) { add('embedded database (PGlite)', d); continue; }
  let got = null;
  for (let c = id; c !== undefined; c = parent.get(c)) {
    const cf = byId.get(c).callFrame; const m = cf.url.includes('/node_modules/') ? null : cf.url.match(/\/dist\/(.*)$/);
    if (!m) continue;
    if (m[1].startsWith('http/build-app') && !process.env.KEEP_BUILDAPP) continue;
    const key = m[1] + ' ' + cf.functionName; got = rules.find(([re]) => re.test(key))[1]; break;
  }
  if (got) { add(got, d); continue; }
  if (f.functionName === 'runMicrotasks') { add('microtask turns (runMicrotasks)', d); continue; }
  const u = f.url;
  if (u.includes('node_modules/')) { const p = u.split('node_modules/').pop().split('/'); add(`${p[0].startsWith('@') ? p[0] + '/' + p[1] : p[0]} (outside svc frames)`, d); continue; }
  if (u.startsWith('node:')) { add("node's http, streams, events, timers (outside svc frames)", d); continue; }
  add('natives elsewhere', d);
}
const scale = mainUs ? Number(mainUs) / (busy / n) : 1;
console.log(`profiled busy ${(busy / n).toFixed(0)} µs per completion; scaled to ${mainUs ?? '(unscaled)'}`);
for (const [k, v] of [...phase].sort((a, b) => b[1] - a[1])) console.log(`| ${k} | ${(v / n * scale).toFixed(0)} | ${(100 * v / busy).toFixed(1)} % |`);
