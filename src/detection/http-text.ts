/**
 * Assembles the scan text of an HTTP request: one line per part (path, each query value, each
 * header that can carry an attack, the body), so line-anchored patterns see each value on its
 * own. Bounded by normalization afterwards.
 */
import type { HttpRequestShape } from './types.ts';

// Headers whose values are attacker-controlled and interpreted by applications.
const SCANNED_HEADERS = new Set([
  'user-agent', 'referer', 'cookie', 'x-forwarded-for', 'x-forwarded-host', 'x-real-ip', 'x-client-ip', 'x-remote-ip', 'x-remote-addr',
  'x-originating-ip', 'x-custom-ip-authorization', 'client-ip', 'true-client-ip', 'cluster-client-ip', 'x-host', 'forwarded',
  'x-original-url', 'x-rewrite-url', 'x-override-url', 'x-http-method-override', 'x-http-method', 'x-method-override', 'authorization',
  'origin', 'x-api-version', 'x-requested-with',
]);

export const PART_SEPARATOR = '\u2029';

function queryLines(query: HttpRequestShape['query']): string[] {
  if (query === undefined) return [];
  if (typeof query === 'string') return query.split('&').map((pair) => pair);
  const lines: string[] = [];
  for (const [name, value] of Object.entries(query)) {
    for (const item of Array.isArray(value) ? value : [value]) lines.push(`${name}=${String(item)}`);
  }
  return lines;
}

export function httpScanText(request: HttpRequestShape): { text: string; headerNames: string[] } {
  const lines: string[] = [];
  const path = request.path ?? '/';
  const questionMark = path.indexOf('?');
  lines.push(questionMark >= 0 ? path.slice(0, questionMark) : path);
  if (questionMark >= 0) lines.push(...queryLines(path.slice(questionMark + 1)));
  lines.push(...queryLines(request.query));
  const headerNames: string[] = [];
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    const lower = name.toLowerCase();
    headerNames.push(lower);
    if (value === undefined || !SCANNED_HEADERS.has(lower)) continue;
    for (const item of Array.isArray(value) ? value : [value]) lines.push(`${lower}: ${String(item)}`);
  }
  if (request.body !== undefined && request.body !== null) {
    lines.push(typeof request.body === 'string' ? request.body : JSON.stringify(request.body));
  }
  // U+2029 separates the parts: a line terminator for ^/$ (patterns run with the m flag), yet
  // distinct from CR/LF, so a CRLF-injection pattern only fires on a CR or LF inside a value.
  return { text: lines.join(PART_SEPARATOR), headerNames };
}
