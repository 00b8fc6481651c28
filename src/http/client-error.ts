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

const REASONS: Record<number, string> = { 400: 'Bad Request', 405: 'Method Not Allowed', 408: 'Request Timeout', 431: 'Request Header Fields Too Large', 501: 'Not Implemented' };
/** An RFC 9110 method token: one or more `tchar`s. */
const METHOD_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * The method of the request line Node's parser refused as HPE_INVALID_METHOD: the line holding the
 * byte it stopped at (a pipelined request may follow earlier ones in the same packet), up to the
 * first space or line end (at most 65 characters: a longer token is cut at 65).
 */
export function refusedMethod(error: Error & { rawPacket?: unknown; bytesParsed?: unknown }): string | null {
  if (!Buffer.isBuffer(error.rawPacket)) return null;
  const text = error.rawPacket.toString('latin1');
  const at = Math.min(typeof error.bytesParsed === 'number' ? error.bytesParsed : 0, text.length);
  const start = text.lastIndexOf('\n', Math.max(0, at - 1)) + 1;
  const line = text.slice(start, start + 65);
  const end = line.search(/[ \r\n]/);
  return end < 0 ? line : line.slice(0, end);
}

/** What svc serves (its API and the gateways' traffic); CONNECT is not among them. */
const SERVED_METHODS = 'DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT';

/** The response Node's HTTP server has in flight on a socket (an internal field Node's own handler reads). */
interface ServerSocket extends Socket {
  _httpMessage?: { headersSent?: boolean } | null;
}

export function clientErrorReply(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // A response already under way on this connection (a pipelined request refused while an earlier
  // one streams its answer): an answer written now would land inside that response's body, so the
  // connection is closed instead, as Node's default handler does.
  if ((socket as ServerSocket)._httpMessage?.headersSent === true) {
    socket.destroy(error);
    return;
  }
  let code: ErrorCode =
    error.code === 'HPE_HEADER_OVERFLOW' ? 'HEADERS_TOO_LARGE' : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'REQUEST_TIMEOUT' : 'MALFORMED_REQUEST';
  let details: Record<string, unknown> | undefined;
  if (error.code === 'HPE_INVALID_METHOD') {
    // A method Node's parser does not read: a valid token is a method svc cannot serve (501,
    // RFC 9110 §15.6.2), anything else a broken request line. Only a valid token is echoed.
    const method = refusedMethod(error);
    if (method !== null && METHOD_TOKEN.test(method)) [code, details] = ['METHOD_NOT_IMPLEMENTED', method.length <= 64 ? { method } : undefined];
    else code = 'INVALID_METHOD';
  }
  const requestId = randomUUID();
  const status = ERRORS[code].status;
  const body = JSON.stringify(errorBody(code, ERRORS[code].message, requestId, details));
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
