// Baseline for the collector benchmark: a bare Fastify route that takes the same raw bodies as
// POST /findings and /findings/batch, parses them as JSON and answers 202 / 200 — no signature,
// no de-duplication, no database.
import Fastify from 'fastify';

const app = Fastify({ logger: false, bodyLimit: 16 * 1_048_576 });
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
app.post('/findings', async (request, reply) => {
  JSON.parse((request.body as Buffer).toString('utf8'));
  reply.status(202);
  return { status: 'accepted' };
});
app.post('/findings/batch', async (request) => {
  const batch = JSON.parse((request.body as Buffer).toString('utf8')) as { findings: unknown[] };
  return { accepted: batch.findings.length, results: batch.findings.map(() => ({ status: 'accepted' })) };
});
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
