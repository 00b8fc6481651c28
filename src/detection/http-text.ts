/**
 * Assembles the scan text of an HTTP request: one line per part (path, each query value, each
 * header that can carry an attack, the body), so line-anchored patterns see each value on its
 * own. Bounded by normalization afterwards.
 */
import type { HttpRequestShape } from './types.ts';
import { isXmlContentType, xmlScanView } from './xml-body.ts';

// Every header is scanned (attacks ride on arbitrary headers such as X-Filename) except the
// structural ones whose values browsers and proxies set and applications do not interpret.
const SKIPPED_HEADERS = new Set([
  'host', 'accept', 'accept-encoding', 'accept-language', 'accept-charset', 'connection', 'content-length', 'content-type',
  'cache-control', 'pragma', 'upgrade-insecure-requests', 'te', 'keep-alive', 'proxy-connection', 'if-none-match',
  'if-modified-since', 'dnt', 'priority', 'sec-fetch-site', 'sec-fetch-mode', 'sec-fetch-dest', 'sec-fetch-user',
  'sec-ch-ua', 'sec-ch-ua-mobile', 'sec-ch-ua-platform', 'content-encoding', 'transfer-encoding', 'expect',
]);

export const PART_SEPARATOR = '\u2029';

/**
 * Headers whose URL names where the request came from (the browser sets them to the page the
 * user was on); the server never fetches that URL, so its scheme and host are not a request
 * forgery target: a Referer of http://127.0.0.1:8080/admin is what an intranet user's browser
 * sends. Only the path, query and fragment are scanned (injection payloads ride there).
 */
const ORIGIN_HEADERS: ReadonlySet<string> = new Set(['referer', 'referrer', 'origin']);
const URL_AUTHORITY = /^\s{0,8}[a-z][a-z0-9+.-]{0,20}:\/\/[^/?#\s]{0,512}/i;

function scannedHeaderValue(name: string, value: string): string {
  return ORIGIN_HEADERS.has(name) ? value.replace(URL_AUTHORITY, '') : value;
}

function queryLines(query: HttpRequestShape['query']): string[] {
  if (query === undefined) return [];
  if (typeof query === 'string') return query.split('&').map((pair) => pair);
  const lines: string[] = [];
  for (const [name, value] of Object.entries(query)) {
    for (const item of Array.isArray(value) ? value : [value]) lines.push(`${name}=${String(item)}`);
  }
  return lines;
}

// CR or LF, raw or percent-encoded (also double-encoded and IIS %u form).
const LINE_BREAK = /[\r\n]|%(?:25)?0[ad]|%u000[ad]/i;
// A line break inside a URL query value followed by what reads as a new header or parameter.
const LINE_BREAK_THEN_FIELD = /(?:[\r\n]|%(?:25)?0[ad]|%u000[ad])(?:[\r\n]|%(?:25)?0[ad]|%u000[ad]|\s|%20|\+){0,4}[a-z0-9_.-]{1,40}(?:\s|%20|\+){0,2}(?::|%3a|=)/i;

/** Marker lines for request-structure anomalies a value-level pattern cannot see (`crlf.request-structure`). */
export const ANOMALY_PREFIX = 'svc-protocol-anomaly: ';

function decodeName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
  }
}

/**
 * Line breaks where HTTP has none: in the path, in a query parameter name, in a header value, or
 * inside a URL query value right before something shaped like a header or parameter (response
 * splitting, header injection, FastCGI variable injection). Form and JSON bodies are not checked:
 * multi-line text is ordinary there.
 */
function protocolAnomalies(pathOnly: string, queryPairs: readonly string[], headers: readonly [string, string][]): string[] {
  const found = new Set<string>();
  if (LINE_BREAK.test(pathOnly)) found.add('crlf-in-path');
  for (const pair of queryPairs) {
    const equals = pair.indexOf('=');
    const name = equals >= 0 ? pair.slice(0, equals) : pair;
    const decoded = decodeName(name);
    if (LINE_BREAK.test(name) || LINE_BREAK.test(decoded)) found.add('crlf-in-parameter-name');
    if (equals >= 0 && LINE_BREAK_THEN_FIELD.test(pair.slice(equals + 1))) found.add('crlf-in-query-value');
    if (BOGUS_ARRAY_NAME.test(decoded)) found.add('bogus-parameter-array');
    if (equals >= 0 && METHOD_OVERRIDE_NAME.test(decoded) && HTTP_METHOD.test(decodeName(pair.slice(equals + 1)))) found.add('method-override-in-query');
  }
  for (const [name, value] of headers) {
    if (LINE_BREAK.test(value)) found.add('crlf-in-header-value');
    if (name === 'content-type' && mediaTypeInParameters(value)) found.add('media-type-in-content-type-parameter');
    else if (name === 'cookie' && LEGACY_COOKIE.test(value)) found.add('legacy-cookie-attribute');
    else if (name === 'request-range') found.add('request-range-header');
  }
  return [...found].map((tag) => `${ANOMALY_PREFIX}${tag}`);
}

// A parameter array name with characters after a closing bracket ("foo[1]a", "foo[1]a[2]"):
// PHP and other parsers disagree about what it names (parameter pollution).
const BOGUS_ARRAY_NAME = /\][^[\]=]/;
// RFC 2109's "$Version" cookie attribute: obsolete since RFC 6265, and servers that still honour
// it read quoted values differently (a cookie can smuggle others inside quotes).
const LEGACY_COOKIE = /(?:^|[;,])\s*\$version\s*=/i;
// The HTTP method a framework takes from a query parameter instead of the request line
// (`POST /orders/7?_method=DELETE`): a request that access rules keyed on the method see as one
// method and the application runs as another. Form bodies are not checked: HTML forms send
// `_method` there by design (Rails, Laravel).
const METHOD_OVERRIDE_NAME = /^_method$/i;
const HTTP_METHOD = /^\s*(?:get|head|post|put|patch|delete|options|trace|connect|propfind|proppatch|mkcol|copy|move|lock|unlock|search)\s*$/i;
const MEDIA_TYPE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/i;

/**
 * A Content-Type parameter whose value is itself a media type
 * (`application/x-www-form-urlencoded;boundary="application/json"`): a body-parser confusion
 * trick, where a component that looks for "json" or "xml" anywhere in the header parses the body
 * differently from the application. multipart/related's `type` and `start-info` (RFC 2387) are
 * media types by definition and are not counted.
 */
function mediaTypeInParameters(contentType: string): boolean {
  const semicolon = contentType.indexOf(';');
  if (semicolon < 0) return false;
  const related = /^\s*multipart\/related\s*$/i.test(contentType.slice(0, semicolon));
  for (const parameter of contentType.slice(semicolon + 1).split(';')) {
    const equals = parameter.indexOf('=');
    if (equals < 0) continue;
    const name = parameter.slice(0, equals).trim().toLowerCase();
    if (related && (name === 'type' || name === 'start-info')) continue;
    const value = parameter.slice(equals + 1).trim().replace(/^"(.*)"$/, '$1').trim();
    if (value.length <= 255 && MEDIA_TYPE.test(value)) return true;
  }
  return false;
}

export function httpScanText(request: HttpRequestShape): { text: string; headerNames: string[] } {
  const lines: string[] = [];
  const path = request.path ?? '/';
  const questionMark = path.indexOf('?');
  const pathOnly = questionMark >= 0 ? path.slice(0, questionMark) : path;
  lines.push(pathOnly);
  const queryPairs = [...(questionMark >= 0 ? queryLines(path.slice(questionMark + 1)) : []), ...queryLines(request.query)];
  lines.push(...queryPairs);
  const headerNames: string[] = [];
  const headerValues: [string, string][] = [];
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    const lower = name.toLowerCase();
    headerNames.push(lower);
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      headerValues.push([lower, String(item)]);
      if (!SKIPPED_HEADERS.has(lower)) lines.push(`${lower}: ${scannedHeaderValue(lower, String(item))}`);
    }
  }
  lines.push(...protocolAnomalies(pathOnly, queryPairs, headerValues));
  if (request.body !== undefined && request.body !== null) {
    if (typeof request.body !== 'string') lines.push(jsonText(request.body));
    else {
      // A well-formed XML body is scanned by its values (see xml-body.ts); anything else raw.
      const contentType = headerValues.find(([name]) => name === 'content-type')?.[1];
      const view = isXmlContentType(contentType) ? xmlScanView(request.body) : null;
      if (view === null) lines.push(request.body);
      else lines.push(...view);
    }
  }
  // U+2029 separates the parts: a line terminator for ^/$ (patterns run with the m flag), yet
  // distinct from CR/LF, so a CRLF-injection pattern only fires on a CR or LF inside a value.
  return { text: lines.join(PART_SEPARATOR), headerNames };
}

/**
 * JSON text of a parsed body. JSON.stringify recurses, so a body nested some thousands of levels
 * deep (which JSON.parse accepts) overflows the stack; such a body is serialised iteratively
 * instead, to the same text.
 */
export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return iterativeJson(value);
  }
}

type Frame = { kind: 'value'; value: unknown } | { kind: 'text'; text: string };

function iterativeJson(root: unknown): string {
  const out: string[] = [];
  const stack: Frame[] = [{ kind: 'value', value: root }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame.kind === 'text') {
      out.push(frame.text);
      continue;
    }
    const value = frame.value;
    if (value === null || typeof value !== 'object') {
      out.push(typeof value === 'number' && !Number.isFinite(value) ? 'null' : (JSON.stringify(value) ?? 'null'));
      continue;
    }
    const pending: Frame[] = [];
    if (Array.isArray(value)) {
      pending.push({ kind: 'text', text: '[' });
      value.forEach((item, index) => {
        if (index > 0) pending.push({ kind: 'text', text: ',' });
        pending.push(item === undefined || typeof item === 'function' ? { kind: 'text', text: 'null' } : { kind: 'value', value: item });
      });
      pending.push({ kind: 'text', text: ']' });
    } else {
      pending.push({ kind: 'text', text: '{' });
      let first = true;
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
        if (item === undefined || typeof item === 'function') continue;
        pending.push({ kind: 'text', text: `${first ? '' : ','}${JSON.stringify(key)}:` }, { kind: 'value', value: item });
        first = false;
      }
      pending.push({ kind: 'text', text: '}' });
    }
    for (let index = pending.length - 1; index >= 0; index--) stack.push(pending[index]!);
  }
  return out.join('');
}
