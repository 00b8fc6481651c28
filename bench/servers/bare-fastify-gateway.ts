// Baseline for the gateway benchmark's CPU target (issue #13: svc's CPU per JSON completion
// ≤ 1.6× this): a bare Fastify route making the same undici call as svc. Fastify parses the JSON
// body, the route sends it on to the fake upstream over a pooled keep-alive undici connection,
// parses the JSON answer and replies with it (streams are piped back as they arrive). No hooks,
// logging, auth, validation, screening, budgets or evidence: the framework and the upstream call
// alone.
import Fastify from 'fastify';
import { Pool } from 'undici';
import { recordPhases } from './phases.ts';

recordPhases();

const upstream = new URL(process.env.BENCH_UPSTREAM_BASE_URL ?? 'http://127.0.0.1:1/v1');
const pool = new Pool(upstream.origin, { connections: 16 });
const path = `${upstream.pathname.replace(/\/$/, '')}/chat/completions`;

const app = Fastify({ logger: false });
app.post('/v1/chat/completions', async (request, reply) => {
  const body = request.body as { stream?: boolean };
  const answer = await pool.request({ path, method: 'POST', headers: { 'content-type': 'application/json', authorization: request.headers.authorization ?? '' }, body: JSON.stringify(body) });
  reply.code(answer.statusCode);
  if (body.stream === true) return reply.header('content-type', 'text/event-stream').send(answer.body);
  return answer.body.json();
});
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
process.on('SIGTERM', () => void app.close().then(() => pool.close()).then(() => process.exit(0)));
