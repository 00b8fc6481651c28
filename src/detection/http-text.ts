/**
 * Assembles the scan text of an HTTP request: one line per part (path, each query value, each
 * header that can carry an attack, the body), so line-anchored patterns see each value on its
 * own. Bounded by normalization afterwards.
 */
import type { HttpRequestShape } from './types.ts';

// Every header is scanned (attacks ride on arbitrary headers such as X-Filename) except the
// structural ones whose values browsers and proxies set and applications do not interpret.
const SKIPPED_HEADERS = new Set([
  'host', 'accept', 'accept-encoding', 'accept-language', 'accept-charset', 'connection', 'content-length', 'content-type',
  'cache-control', 'pragma', 'upgrade-insecure-requests', 'te', 'keep-alive', 'proxy-connection', 'if-none-match',
  'if-modified-since', 'dnt', 'priority', 'sec-fetch-site', 'sec-fetch-mode', 'sec-fetch-dest', 'sec-fetch-user',
  'sec-ch-ua', 'sec-ch-ua-mobile', 'sec-ch-ua-platform', 'content-encoding', 'transfer-encoding', 'expect',
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
    if (value === undefined || SKIPPED_HEADERS.has(lower)) continue;
    for (const item of Array.isArray(value) ? value : [value]) lines.push(`${lower}: ${String(item)}`);
  }
  if (request.body !== undefined && request.body !== null) {
    lines.push(typeof request.body === 'string' ? request.body : JSON.stringify(request.body));
  }
  // U+2029 separates the parts: a line terminator for ^/$ (patterns run with the m flag), yet
  // distinct from CR/LF, so a CRLF-injection pattern only fires on a CR or LF inside a value.
  return { text: lines.join(PART_SEPARATOR), headerNames };
}
