// The bare route of bench/servers/bare-fastify-gateway.ts in plain node (modules from SVC_DIR), with the same SIGUSR2 profiler toggle (PROFILE_OUT_BARE).
import { join } from 'node:path';
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const require = createRequire(join(process.env.SVC_DIR, 'package.json'));
const Fastify = require('fastify'); const { Pool } = require('undici');
const upstream = new URL(process.env.BENCH_UPSTREAM_BASE_URL);
const pool = new Pool(upstream.origin, { connections: 16 });
const path = `${upstream.pathname.replace(/\/$/, '')}/chat/completions`;
const app = Fastify({ logger: false });
app.post('/v1/chat/completions', async (request, reply) => {
  const body = request.body;
  const answer = await pool.request({ path, method: 'POST', headers: { 'content-type': 'application/json', authorization: request.headers.authorization ?? '' }, body: JSON.stringify(body) });
  reply.code(answer.statusCode);
  if (body.stream === true) return reply.header('content-type', 'text/event-stream').send(answer.body);
  return answer.body.json();
});
await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ port: app.server.address().port })}\n`);
let session = null;
process.on('SIGUSR2', async () => {
  if (session === null) { session = new Session(); session.connect(); await session.post('Profiler.enable'); await session.post('Profiler.setSamplingInterval', { interval: 100 }); await session.post('Profiler.start'); }
  else { const { profile } = await session.post('Profiler.stop'); writeFileSync(process.env.PROFILE_OUT_BARE, JSON.stringify(profile)); session.disconnect(); session = null; }
});
process.on('SIGTERM', () => void app.close().then(() => pool.close()).then(() => process.exit(0)));
