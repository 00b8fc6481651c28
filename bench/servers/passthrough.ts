// Floor for the gateway benchmark: the thinnest proxy a gateway could be. node:http in, the body
// forwarded untouched over one pooled keep-alive undici connection, the answer (JSON or SSE) piped
// back as it arrives: no framework, auth, validation, routing, logging or metrics. What it adds
// over a direct call is the cost of the extra loopback hop itself on this machine.
import { createServer } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Pool } from 'undici';
import { recordPhases } from './phases.ts';

recordPhases();

const upstream = new URL(process.env.BENCH_UPSTREAM_BASE_URL ?? 'http://127.0.0.1:1/v1');
const pool = new Pool(upstream.origin, { connections: 16 });
const path = `${upstream.pathname.replace(/\/$/, '')}/chat/completions`;

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    pool
      .request({ path, method: 'POST', headers: { 'content-type': 'application/json', authorization: request.headers.authorization ?? '' }, body: Buffer.concat(chunks) })
      .then(async (answer) => {
        response.writeHead(answer.statusCode, { 'content-type': String(answer.headers['content-type'] ?? 'application/json') });
        await pipeline(answer.body, response);
      })
      .catch(() => {
        if (!response.headersSent) response.writeHead(502);
        response.end();
      });
  });
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
