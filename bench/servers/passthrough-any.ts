// Floor for the API-security benchmark: the thinnest reverse proxy. node:http in, any method and
// path forwarded with the request headers (minus hop-by-hop) over pooled keep-alive undici
// connections, the answer piped back: no framework, inspection, logging or metrics.
import { createServer } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Pool } from 'undici';

const upstream = new URL(process.env.BENCH_UPSTREAM_BASE_URL ?? 'http://127.0.0.1:1');
const pool = new Pool(upstream.origin, { connections: 64 });
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'host', 'te', 'trailer', 'proxy-connection', 'expect']);

const server = createServer((request, response) => {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(request.headers)) if (value !== undefined && !HOP.has(name)) headers[name] = value;
  const hasBody = request.headers['content-length'] !== undefined || request.headers['transfer-encoding'] !== undefined;
  pool
    .request({ path: request.url ?? '/', method: (request.method ?? 'GET') as 'GET', headers, body: hasBody ? request : null })
    .then(async (answer) => {
      const out: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && !HOP.has(name)) out[name] = value;
      response.writeHead(answer.statusCode, out);
      await pipeline(answer.body, response);
    })
    .catch(() => {
      if (!response.headersSent) response.writeHead(502);
      response.end();
    });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
