/**
 * `BENCH_BEFORE_DIR=<a checkout with its node_modules> npx tsx bench/mcp-before-after.ts`: svc's own cost of a tools/call,
 * before and after, in one process: two checkouts' svc (two module graphs, the bench's services: PGlite in memory, T1 + T3
 * signals, T5 in memory) served through app.inject (no client socket) against one raw in-process upstream that answers each
 * call with one SSE event; calls alternate A/B one by one (p50 wall time per round), then CPU per call in alternating blocks
 * (each ending with the audit entries appended). A = BENCH_BEFORE_DIR, B = this checkout (A_DIR / B_DIR override).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
const here = new URL('..', import.meta.url).pathname.replace(/\/$/, '');
const dirs = { A: process.env.A_DIR ?? process.env.BENCH_BEFORE_DIR ?? here, B: process.env.B_DIR ?? here };
const ROUNDS = Number(process.env.ROUNDS ?? 8), PER = Number(process.env.PER ?? 500), BLOCK = Number(process.env.BLOCK ?? 1000), BLOCKS = Number(process.env.BLOCKS ?? 8);
const load0 = loadavg(); const t0 = new Date().toISOString().slice(11, 19);
const tool = { name: 'echo', description: 'Echoes the message.', inputSchema: { type: 'object', properties: { message: { type: 'string' } } } };
const raw = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const m = JSON.parse(Buffer.concat(chunks).toString());
    if (m.id === undefined) { res.writeHead(202).end(); return; }
    const result = m.method === 'initialize' ? { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'raw', version: '1' } }
      : m.method === 'tools/list' ? { tools: [tool] } : { content: [{ type: 'text', text: `Echo: ${m.params?.arguments?.message}` }] };
    res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 'sess-1' });
    res.end(`event: message\ndata: ${JSON.stringify({ result, jsonrpc: '2.0', id: m.id })}\n\n`);
  });
});
await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
const upstreamUrl = `http://127.0.0.1:${(raw.address() as AddressInfo).port}/mcp`;
const start = async (dir: string) => {
  const { createDetectionEngine, createProfileBaseline } = await import(`${dir}/src/detection/index.ts`);
  const { createCache } = await import(`${dir}/src/platform/cache.ts`);
  const { createTestServices } = await import(`${dir}/test/helpers/app.ts`);
  const { buildApp } = await import(`${dir}/src/http/build-app.ts`);
  const t5Cache = createCache({ kind: 'memory' }, 'bench-mcp:');
  const t5 = createProfileBaseline(t5Cache, { namespace: 'mcp-t5' });
  const services = await createTestServices({ env: { LOG_LEVEL: 'error' }, services: { mcp: { detection: createDetectionEngine(), behaviour: t5 } } });
  const app = await buildApp(services.config, services);
  await app.ready();
  const apiKey = (await services.accounts.createOrg({ name: `bench-${Date.now()}`, plan: 'enterprise' })).apiKey;
  const created = await app.inject({ method: 'POST', url: '/api/v1/mcp/servers', headers: { authorization: `Bearer ${apiKey}` }, payload: { name: 'bench', url: upstreamUrl } });
  const path = (created.json() as { endpoint: string }).endpoint;
  const headers = { authorization: `Bearer ${apiKey}`, 'x-session-id': 'bench', accept: 'application/json, text/event-stream', 'content-type': 'application/json', host: '127.0.0.1' };
  const post = (body: object, extra: Record<string, string> = {}) => app.inject({ method: 'POST', url: path, headers: { ...headers, ...extra }, payload: JSON.stringify(body) });
  const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
  const sid = init.headers['mcp-session-id'] as string;
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': sid });
  await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': sid });
  let id = 3;
  const call = async () => { const t = performance.now(); const r = await post({ method: 'tools/call', params: { name: 'echo', arguments: { message: 'hello' } }, jsonrpc: '2.0', id: id++ }, { 'mcp-session-id': sid }); if (!r.body.includes('Echo: hello')) throw new Error(r.body); return (performance.now() - t) * 1000; };
  return { call, flush: () => services.mcp.flush(), close: async () => { await app.close(); await services.close(); await t5Cache.close(); } };
};
const A = await start(dirs.A), B = await start(dirs.B);
for (let i = 0; i < 1000; i++) { await A.call(); await B.call(); }
const p50 = (a: number[]) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]!; };
const rows: string[] = []; const diff: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const a: number[] = [], b: number[] = [];
  for (let i = 0; i < PER; i++) { if ((i + r) % 2 === 0) { a.push(await A.call()); b.push(await B.call()); } else { b.push(await B.call()); a.push(await A.call()); } }
  rows.push(`${p50(a).toFixed(0)}/${p50(b).toFixed(0)}`); diff.push(p50(b) - p50(a));
}
const cpu = { A: [] as number[], B: [] as number[] };
const block = async (side: typeof A, into: number[]) => { const c0 = process.cpuUsage(); for (let i = 0; i < BLOCK; i++) await side.call(); await side.flush(); const c = process.cpuUsage(c0); into.push((c.user + c.system) / BLOCK); };
for (let k = 0; k < BLOCKS; k++) { if (k % 2 === 0) { await block(A, cpu.A); await block(B, cpu.B); } else { await block(B, cpu.B); await block(A, cpu.A); } }
const f = (a: number[]) => a.map((x) => x.toFixed(0)).join(' ');
const dcpu = cpu.B.map((x, i) => x - cpu.A[i]!);
console.log(`${t0} UTC, load ${load0.map((x) => x.toFixed(2)).join(' ')} -> ${loadavg().map((x) => x.toFixed(2)).join(' ')}; A=${dirs.A} B=${dirs.B}`);
console.log(`wall p50 per call A/B by round (us): ${rows.join('  ')}; B-A median ${p50(diff).toFixed(0)} [${f(diff)}]`);
console.log(`CPU per call A ${f(cpu.A)} (median ${p50(cpu.A).toFixed(0)}), B ${f(cpu.B)} (median ${p50(cpu.B).toFixed(0)}); B-A per pair [${f(dcpu)}] median ${p50(dcpu).toFixed(0)}`);
await A.close(); await B.close(); raw.close();
setTimeout(() => process.exit(0), 500).unref();
