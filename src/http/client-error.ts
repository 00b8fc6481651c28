/**
 * Answers for requests Node's HTTP parser rejects before Fastify sees them (headers too large,
 * a request that timed out, a malformed request line) or hands to the server's `connect` event
 * (CONNECT): the same error shape and an X-Request-ID as every other answer, written straight to
 * the socket.
 */
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import { ERRORS, errorBody, type ErrorCode } from '../platform/errors.ts';

const REASONS: Record<number, string> = { 400: 'Bad Request', 405: 'Method Not Allowed', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };
/** What svc serves (its API and the gateways' traffic); CONNECT is not among them. */
const SERVED_METHODS = 'DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT';

export function clientErrorReply(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const code: ErrorCode =
    error.code === 'HPE_HEADER_OVERFLOW' ? 'HEADERS_TOO_LARGE' : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'REQUEST_TIMEOUT' : 'MALFORMED_REQUEST';
  const requestId = randomUUID();
  const status = ERRORS[code].status;
  const body = JSON.stringify(errorBody(code, ERRORS[code].message, requestId));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-ID: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/**
 * CONNECT: svc is no forward proxy. Node hands such a request to the server's `connect` event and,
 * with no listener, closes the connection without a word; this answers 405 METHOD_NOT_ALLOWED
 * (with the client's valid X-Request-ID, as any answer) and closes the connection, since what
 * would follow is a tunnel's bytes, not HTTP.
 */
export function connectReply(socket: Duplex, requestId: string): void {
  socket.on('error', () => socket.destroy());
  const body = JSON.stringify(errorBody('METHOD_NOT_ALLOWED', 'CONNECT is not served: svc is a reverse proxy, not a forward proxy; the Allow header lists the methods it serves.', requestId, { method: 'CONNECT', allowed: SERVED_METHODS.split(', ') }));
  socket.end(
    `HTTP/1.1 405 ${REASONS[405]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Allow: ${SERVED_METHODS}\r\nX-Request-ID: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
}
