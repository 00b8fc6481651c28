// Baseline for the foundation benchmark: a bare Fastify route, no hooks, no logging.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/api/v1/whoami', async () => ({ org_id: '00000000-0000-0000-0000-000000000000', org_tag: 'abcdefgh', plan: 'pro', scope: 'read', class: 'live' }));
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
