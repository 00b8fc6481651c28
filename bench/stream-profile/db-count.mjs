// What one served JSON completion asks of the embedded database (issue #39 item 3, speed-json41 round):
// svc over a checkout's dist/ (SVC_DIR, default this checkout) in this process, embedded PGlite, the
// fast fake upstream (UPSTREAM_BASE_URL, e.g. from `npx tsx bench/gateway-upstream.ts`). After a warm-up,
// N sequential JSON completions; counts the calls into PGlite (query, exec, transaction) and their
// statements' text, and each table's rows before and after (so the rows a completion leaves).
//   UPSTREAM_BASE_URL=http://127.0.0.1:PORT N=500 node bench/stream-profile/db-count.mjs
import { startInProcess } from './in-process.mjs';
const n = Number(process.env.N ?? 500);
const { services, complete, close } = await startInProcess('svc-dbcount-');
const pg = services.db.instance;
const calls = new Map();
let counting = false;
const note = (kind, sql) => { if (!counting) return; const key = `${kind}: ${String(sql).replace(/\s+/g, ' ').replace(/'[0-9a-f-]{36}'/g, "'<uuid>'").slice(0, 110)}`; calls.set(key, (calls.get(key) ?? 0) + 1); };
const wrap = (target, label) => {
  for (const method of ['query', 'exec']) { const original = target[method].bind(target); target[method] = (sql, ...rest) => { note(`${label}.${method}`, sql); return original(sql, ...rest); }; }
};
wrap(pg, 'db');
const originalTransaction = pg.transaction.bind(pg);
pg.transaction = (fn) => { note('db.transaction', ''); return originalTransaction((tx) => { wrap(tx, 'tx'); return fn(tx); }); };
// Time inside the engine: each protocol message's synchronous run (execProtocolRawSync) and each
// syncToFs, by statement (a simple query's text, or the extended query's Parse text for its Bind,
// Describe, Execute and Sync), wall µs measured around the synchronous call.
const engine = new Map();
let lastParse = '?';
const decoder = new TextDecoder();
const cstring = (bytes, at) => { let end = at; while (end < bytes.length && bytes[end] !== 0) end++; return [decoder.decode(bytes.subarray(at, end)), end + 1]; };
const shorten = (sql) => sql.replace(/\s+/g, ' ').replace(/'[0-9a-f-]{36}'/g, "'<uuid>'").slice(0, 90);
const originalSync = pg.execProtocolRawSync.bind(pg);
pg.execProtocolRawSync = (message) => {
  let label;
  const type = String.fromCharCode(message[0]);
  if (type === 'Q') label = `simple: ${shorten(cstring(message, 5)[0])}`;
  else if (type === 'P') { const [, at] = cstring(message, 5); lastParse = shorten(cstring(message, at)[0]); label = `extended P: ${lastParse}`; }
  else label = `extended ${type}: ${lastParse}`;
  const start = process.hrtime.bigint();
  try { return originalSync(message); } finally {
    if (counting) { const entry = engine.get(label) ?? { calls: 0, ns: 0n }; entry.calls++; entry.ns += process.hrtime.bigint() - start; engine.set(label, entry); }
  }
};
const originalSyncToFs = pg.syncToFs.bind(pg);
pg.syncToFs = async (...args) => {
  const start = process.hrtime.bigint();
  try { return await originalSyncToFs(...args); } finally {
    if (counting) { const entry = engine.get('syncToFs (wall, async)') ?? { calls: 0, ns: 0n }; entry.calls++; entry.ns += process.hrtime.bigint() - start; engine.set('syncToFs (wall, async)', entry); }
  }
};
const tables = (await pg.query(`SELECT schemaname, relname FROM pg_stat_user_tables ORDER BY 1, 2`)).rows.map((row) => `${row.schemaname}.${row.relname}`);
const counts = async () => { const out = {}; for (const table of tables) out[table] = Number((await pg.query(`SELECT count(*)::int AS c FROM ${table}`)).rows[0].c); return out; };
for (let index = 0; index < 200; index++) await complete();
await new Promise((r) => setTimeout(r, 1500));
const before = await counts();
counting = true;
for (let index = 0; index < n; index++) await complete();
await new Promise((r) => setTimeout(r, 1500));
counting = false;
const after = await counts();
console.log(`${n} completions`);
console.log('rows added per completion:');
for (const table of tables) if (after[table] !== before[table]) console.log(`  ${table}: ${((after[table] - before[table]) / n).toFixed(3)}`);
console.log('PGlite calls per completion (by statement):');
let total = 0;
for (const [key, value] of [...calls].sort((a, b) => b[1] - a[1])) { total += value; console.log(`  ${(value / n).toFixed(3)}  ${key}`); }
console.log(`  total ${(total / n).toFixed(3)}`);
console.log('inside the engine per completion (protocol calls, wall µs):');
for (const [key, { calls: c, ns }] of [...engine].sort((a, b) => Number(b[1].ns - a[1].ns))) console.log(`  ${(c / n).toFixed(3)} calls  ${(Number(ns) / 1000 / n).toFixed(1)} µs  ${key}`);
await close();
