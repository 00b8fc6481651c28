/**
 * A small real API backend on loopback for the API-security tests: JSON CRUD, multipart
 * uploads (answers the SHA-256 of the bytes it received), a slow chunked stream, a header echo,
 * a slow endpoint, a login that answers 401 to wrong passwords, a switchable health endpoint, and a WebSocket echo written from RFC 6455
 * (handshake, masked client frames in, unmasked frames out — payload bytes echoed unchanged).
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

export interface Backend {
  url: string;
  server: Server;
  /** Makes /health answer 500 (true) or 200 (false). */
  setFailing(failing: boolean): void;
  /** Requests the backend received (method, url, headers). */
  received: { method: string; url: string; headers: IncomingMessage['headers'] }[];
  close(): Promise<void>;
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function json(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

function webSocketEcho(request: IncomingMessage, socket: Duplex): void {
  const key = String(request.headers['sec-websocket-key'] ?? '');
  const accept = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  let buffered = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    for (;;) {
      if (buffered.length < 2) return;
      const opcode = buffered[0]! & 0x0f;
      const masked = (buffered[1]! & 0x80) !== 0;
      let length = buffered[1]! & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (buffered.length < 4) return;
        length = buffered.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (buffered.length < 10) return;
        length = Number(buffered.readBigUInt64BE(2));
        offset = 10;
      }
      const maskOffset = offset;
      if (masked) offset += 4;
      if (buffered.length < offset + length) return;
      const payload = Buffer.from(buffered.subarray(offset, offset + length));
      if (masked) for (let index = 0; index < payload.length; index += 1) payload[index]! ^= buffered[maskOffset + (index % 4)]!;
      buffered = buffered.subarray(offset + length);
      if (opcode === 0x8) {
        socket.end(Buffer.from([0x88, 0x00]));
        return;
      }
      const header = length < 126 ? Buffer.from([0x80 | opcode, length]) : length < 65_536 ? Buffer.from([0x80 | opcode, 126, length >> 8, length & 255]) : (() => {
        const big = Buffer.alloc(10);
        big[0] = 0x80 | opcode;
        big[1] = 127;
        big.writeBigUInt64BE(BigInt(length), 2);
        return big;
      })();
      socket.write(Buffer.concat([header, payload]));
    }
  });
  socket.on('error', () => socket.destroy());
}

export async function startBackend(): Promise<Backend> {
  const items = new Map<string, Record<string, unknown>>();
  let nextId = 1;
  let failing = false;
  const received: Backend['received'] = [];
  const server = createServer((request, response) => {
    received.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers });
    void (async () => {
      const url = new URL(request.url ?? '/', 'http://backend');
      const path = url.pathname;
      if (path === '/login' && request.method === 'POST') {
        // 401 unless the password is "correct horse": the failed-logins feed of T5 reads these answers.
        const body = (await readBody(request)).toString('utf8');
        return json(response, body.includes('"password":"correct horse"') ? 200 : 401, { ok: body.includes('"password":"correct horse"') });
      }
      if (path === '/health') return json(response, failing ? 500 : 200, { ok: !failing });
      if (path === '/echo-headers') return json(response, 200, { headers: request.headers, url: request.url });
      if (path === '/slow') {
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        return json(response, 200, { slow: true });
      }
      if (path === '/stream') {
        response.writeHead(200, { 'content-type': 'text/plain' });
        for (let index = 0; index < 5; index += 1) {
          response.write(`chunk-${index}\n`);
          await new Promise((resolve) => setTimeout(resolve, 30));
        }
        return response.end();
      }
      if (path === '/upload' && request.method === 'POST') {
        const body = await readBody(request);
        return json(response, 200, { bytes: body.length, sha256: createHash('sha256').update(body).digest('hex'), content_type: request.headers['content-type'] });
      }
      if (path === '/no-content') {
        response.writeHead(204);
        return response.end();
      }
      if (path === '/items' && request.method === 'GET') return json(response, 200, { items: [...items.values()] });
      if (path === '/items' && request.method === 'POST') {
        const body = JSON.parse((await readBody(request)).toString('utf8')) as Record<string, unknown>;
        const item = { ...body, id: String(nextId++) };
        items.set(item.id, item);
        return json(response, 201, item);
      }
      const match = /^\/items\/(\d+)$/.exec(path);
      if (match !== null) {
        const id = match[1]!;
        const existing = items.get(id);
        if (existing === undefined) return json(response, 404, { error: 'not found' });
        if (request.method === 'GET') return json(response, 200, existing);
        if (request.method === 'PUT') {
          const body = JSON.parse((await readBody(request)).toString('utf8')) as Record<string, unknown>;
          const item = { ...body, id };
          items.set(id, item);
          return json(response, 200, item);
        }
        if (request.method === 'DELETE') {
          items.delete(id);
          response.writeHead(204);
          return response.end();
        }
      }
      await readBody(request);
      return json(response, 404, { error: 'not found' });
    })().catch(() => {
      response.writeHead(500);
      response.end();
    });
  });
  server.on('upgrade', (request, socket) => webSocketEcho(request, socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    received,
    setFailing: (value) => {
      failing = value;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
