/**
 * A loopback capture server for the SDK-differential suite: records every request exactly as it
 * arrived (method, path, query, headers, raw body) and answers with the reply the test set —
 * a JSON body, an SSE text or AWS event-stream frames — so an official SDK and svc can be pointed
 * at the same place and what each sent compared field by field.
 */
import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CapturedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface Reply {
  status?: number;
  contentType: string;
  headers?: Record<string, string>;
  body: string | Buffer;
}

export interface CaptureServer {
  /** http://127.0.0.1:<port> */
  origin: string;
  requests: CapturedRequest[];
  reply: (reply: Reply | ((request: CapturedRequest) => Reply)) => void;
  /** The requests recorded since the last call (and forgets them). */
  take: () => CapturedRequest[];
  close: () => Promise<void>;
}

export async function startCaptureServer(): Promise<CaptureServer> {
  const requests: CapturedRequest[] = [];
  let current: Reply | ((request: CapturedRequest) => Reply) = { contentType: 'application/json', body: '{}' };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://capture');
      const captured: CapturedRequest = {
        method: request.method ?? '',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: request.headers,
        body: Buffer.concat(chunks),
      };
      requests.push(captured);
      const reply = typeof current === 'function' ? current(captured) : current;
      response.writeHead(reply.status ?? 200, { 'content-type': reply.contentType, ...reply.headers });
      response.end(reply.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    reply: (reply) => {
      current = reply;
    },
    take: () => requests.splice(0, requests.length),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
