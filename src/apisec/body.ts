/**
 * Bounded request-body buffering for inspection. The proxy reads at most INSPECTION_LIMIT bytes
 * of a body before deciding (the detection engine scans at most 64 KiB of text anyway); the
 * bytes read and the rest of the stream are then forwarded unchanged, so a large upload streams
 * through with only its head held in memory. Like ModSecurity's `SecRequestBodyLimitAction
 * ProcessPartial`: what lies beyond the limit is not inspected (docs/apisec.md says so).
 *
 * What is inspected per media type: JSON, GraphQL, XML, form and other text bodies as their text
 * (the engine decodes and views XML by its values); multipart/form-data by each part's headers
 * (field names, file names) and the content of its text parts; binary bodies (a NUL byte in the
 * head) not at all.
 */
import { Readable } from 'node:stream';

export const INSPECTION_LIMIT = 65_536;

export interface BufferedBody {
  /** The bytes read so far (at least min(limit, body length)). */
  readonly head: Buffer;
  /** Whether `head` is the whole body. */
  readonly complete: boolean;
  /** What to forward: the whole body, or the head followed by the rest of the stream. */
  readonly forward: Buffer | Readable;
}

/** Whether a request carries a body at all (RFC 9112 6.3). */
export function hasBody(headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = headers['content-length'];
  return typeof length === 'string' && length !== '0' && length !== '';
}

/**
 * Reads a body's head: the whole body when it ends within `limit` bytes, else the first chunks
 * reaching `limit` and the rest still unread. Event-driven (one promise, no async iterator): a
 * small body costs no event-loop turn beyond its own data and end events.
 */
export function bufferHead(stream: Readable, limit = INSPECTION_LIMIT): Promise<BufferedBody> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    const headOf = () => (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    const cleanup = () => {
      settled = true;
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('close', onClose);
    };
    const onData = (chunk: Buffer | string) => {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      chunks.push(buffer);
      total += buffer.length;
      if (total < limit) return;
      cleanup();
      stream.pause();
      const head = headOf();
      resolve({ head, complete: false, forward: Readable.from(rest(head, stream), { objectMode: false }) });
    };
    const onEnd = () => {
      cleanup();
      const head = headOf();
      resolve({ head, complete: true, forward: head });
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    // Closed without an end: the client went away mid-body.
    const onClose = () => {
      if (!settled) onError(Object.assign(new Error('request body closed before its end'), { code: 'ECONNRESET' }));
    };
    if (stream.readableEnded) return resolve({ head: Buffer.alloc(0), complete: true, forward: Buffer.alloc(0) });
    if (stream.destroyed) return onClose();
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}

async function* rest(head: Buffer, stream: Readable): AsyncGenerator<Buffer> {
  yield head;
  for await (const chunk of stream) yield typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
}

function mediaType(contentType: string | undefined): string {
  if (contentType === undefined) return '';
  const semicolon = contentType.indexOf(';');
  return (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
}

function boundaryOf(contentType: string): string | null {
  for (const parameter of contentType.split(';').slice(1)) {
    const equals = parameter.indexOf('=');
    if (equals < 0) continue;
    if (parameter.slice(0, equals).trim().toLowerCase() !== 'boundary') continue;
    const value = parameter.slice(equals + 1).trim().replace(/^"(.*)"$/, '$1');
    return value.length > 0 && value.length <= 200 ? value : null;
  }
  return null;
}

function looksBinary(buffer: Buffer): boolean {
  return buffer.subarray(0, 1_024).includes(0);
}

const TEXT_PART = /^(?:text\/|application\/(?:json|xml|x-www-form-urlencoded|graphql|javascript|[a-z0-9.+-]*\+(?:json|xml)))/i;

/** The parts of a multipart body worth scanning: part headers, and the content of text parts. */
export function multipartScanText(head: Buffer, boundary: string): string {
  const delimiter = Buffer.from(`--${boundary}`);
  const lines: string[] = [];
  let position = head.indexOf(delimiter);
  while (position >= 0) {
    const start = position + delimiter.length;
    if (head[start] === 0x2d && head[start + 1] === 0x2d) break; // closing delimiter
    const next = head.indexOf(delimiter, start);
    const part = head.subarray(start, next < 0 ? head.length : next);
    const split = part.indexOf('\r\n\r\n');
    const headerText = (split < 0 ? part : part.subarray(0, split)).toString('utf8').trim();
    const content = split < 0 ? Buffer.alloc(0) : part.subarray(split + 4, part.length >= 2 && next >= 0 ? part.length - 2 : part.length);
    lines.push(headerText);
    const partType = /content-type:\s*([^\r\n;]{1,100})/i.exec(headerText)?.[1];
    const isFile = /filename\*?=/i.test(headerText);
    if ((partType === undefined && !isFile) || (partType !== undefined && TEXT_PART.test(partType.trim()))) {
      if (!looksBinary(content)) lines.push(content.toString('utf8'));
    }
    position = next;
  }
  return lines.join('\n');
}

/** The body text the detection engine scans, or undefined when the body is not inspected. */
export function inspectableBody(head: Buffer, contentType: string | undefined): string | undefined {
  if (head.length === 0) return undefined;
  const type = mediaType(contentType);
  if (type === 'multipart/form-data' || type === 'multipart/mixed') {
    const boundary = boundaryOf(contentType ?? '');
    return boundary === null ? undefined : multipartScanText(head, boundary);
  }
  if (looksBinary(head)) return undefined;
  return head.toString('utf8');
}
