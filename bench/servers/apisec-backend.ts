// The protected API for the API-security benchmark: GET /small answers a small JSON object,
// POST /echo reads the body and answers a small JSON object, anything else 200 with {"ok":true}
// (the detection-through-proxy pass sends arbitrary paths). node:http, keep-alive.
import { createServer } from 'node:http';

const SMALL = JSON.stringify({ id: 42, name: 'widget', price: 9.99, tags: ['a', 'b'] });
const OK = '{"ok":true}';
const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const body = request.url === '/small' ? SMALL : OK;
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    response.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
