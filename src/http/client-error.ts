/**
 * Answers for requests Node's HTTP parser rejects before Fastify sees them (headers too large,
 * a request that timed out, a malformed request line): the same error shape and an
 * X-Request-ID as every other answer, written straight to the socket.
 */
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { ERRORS, errorBody, type ErrorCode } from '../platform/errors.ts';

const REASONS: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

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
