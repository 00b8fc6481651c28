/**
 * Path normalization and protocol recognition for the traffic analyzer. A concrete path becomes
 * an endpoint template: /users/123 → /users/{id}, UUIDs → {uuid}, hex digests → {hash}, dates →
 * {date}, e-mail addresses → {email}, long opaque tokens → {token}, and slugs (hyphenated words
 * ending in a number, or four words or more) → {slug}. All checks are per segment, bounded and
 * linear; segments are cut at 200 characters.
 */

const NUMERIC = /^\d{1,40}$/;
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const HEX = /^[0-9a-f]{16,128}$/i;
const DATE = /^(?:19|20)\d\d-?(?:0[1-9]|1[0-2])-?(?:0[1-9]|[12]\d|3[01])(?:T[0-9:.]{2,15}Z?)?$/;
const EMAIL = /^[^@/\s]{1,64}@[a-z0-9.-]{1,190}\.[a-z]{2,24}$/i;
const TOKEN = /^[A-Za-z0-9_\-.~=+]{20,200}$/;
const SLUG_NUMBERED = /^[a-z0-9]+(?:-[a-z0-9]+){0,10}-\d+$/i;
const SLUG_WORDS = /^[a-z0-9]+(?:-[a-z0-9]+){3,20}$/i;
const HAS_DIGIT = /\d/;
const HAS_LETTER = /[a-z]/i;
const VERSION = /^v\d{1,3}(?:\.\d{1,3})?$/i;
const MIXED_ID = /^[A-Za-z0-9_-]{8,64}$/;

/** The template of one path segment ({id}, {uuid}, …) or the segment itself. */
export function normalizeSegment(raw: string): string {
  const segment = raw.length > 200 ? raw.slice(0, 200) : raw;
  if (segment === '') return segment;
  if (NUMERIC.test(segment)) return '{id}';
  if (UUID.test(segment)) return '{uuid}';
  if (HEX.test(segment) && HAS_DIGIT.test(segment) && HAS_LETTER.test(segment)) return '{hash}';
  if (DATE.test(segment)) return '{date}';
  if (segment.includes('@') && EMAIL.test(segment)) return '{email}';
  if (VERSION.test(segment)) return segment;
  if (SLUG_NUMBERED.test(segment)) return '{slug}';
  if (SLUG_WORDS.test(segment)) return '{slug}';
  if (TOKEN.test(segment) && HAS_DIGIT.test(segment) && HAS_LETTER.test(segment)) return '{token}';
  if (MIXED_ID.test(segment) && HAS_DIGIT.test(segment) && HAS_LETTER.test(segment) && /\d{3}/.test(segment)) return '{id}';
  return segment;
}

function decodeSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** /users/123/orders/9f86d081… → /users/{id}/orders/{hash}. Query string removed, trailing slash kept off. */
export function normalizePath(path: string): string {
  const question = path.indexOf('?');
  const bare = question < 0 ? path : path.slice(0, question);
  const segments = bare.split('/').slice(0, 32);
  const out: string[] = [];
  for (const segment of segments) {
    if (segment === '') continue;
    out.push(normalizeSegment(decodeSegment(segment)));
  }
  return `/${out.join('/')}`;
}

export type ApiProtocol = 'rest' | 'graphql' | 'grpc' | 'websocket';

/** REST, GraphQL, gRPC or WebSocket, from the request line and headers. */
export function recognizeProtocol(method: string, path: string, headers: Readonly<Record<string, string | string[] | undefined>>): ApiProtocol {
  const upgrade = headers.upgrade;
  if (typeof upgrade === 'string' && upgrade.toLowerCase() === 'websocket') return 'websocket';
  const contentType = typeof headers['content-type'] === 'string' ? headers['content-type'].toLowerCase() : '';
  if (contentType.startsWith('application/grpc')) return 'grpc';
  if (contentType.startsWith('application/graphql')) return 'graphql';
  const question = path.indexOf('?');
  const bare = (question < 0 ? path : path.slice(0, question)).toLowerCase();
  if (bare.endsWith('/graphql') || bare.endsWith('/graphiql') || bare.endsWith('/gql')) return 'graphql';
  if (method === 'GET' && question >= 0 && /(?:^|&)query=(?:%7B|\{|query|mutation)/i.test(path.slice(question + 1, question + 200))) return 'graphql';
  return 'rest';
}

const STATIC_EXTENSIONS = new Set([
  'js', 'mjs', 'css', 'map', 'png', 'jpg', 'jpeg', 'gif', 'svg', 'ico', 'webp', 'avif', 'woff', 'woff2', 'ttf', 'otf', 'eot', 'mp4', 'webm', 'mp3', 'txt', 'html', 'htm',
]);
const PROBE_PATHS = new Set(['/favicon.ico', '/robots.txt', '/sitemap.xml', '/health', '/healthz', '/livez', '/readyz', '/ready', '/ping', '/status', '/apple-touch-icon.png']);
// Paths that scanners try against any site and that are never an API endpoint of the protected
// backend (dotfiles, PHP admin kits, router exploits). Names an API might really serve (/debug,
// /actuator, /console, /backup) are NOT here: if the backend answers them they are exactly the
// shadow endpoints worth reporting, and if it answers 404 the analyzer ignores them anyway.
const SCANNER_MARKERS = [
  '/.env', '/.git/', '/.git', '/.svn', '/.hg/', '/.ds_store', '/.aws/', '/.ssh/', '/.htaccess', '/.htpasswd', '/.vscode/', '/.idea/', '/wp-admin', '/wp-login', '/wp-content',
  '/wp-includes', '/wordpress/', '/xmlrpc.php', '/phpmyadmin', '/pma/', '/cgi-bin/', '/etc/passwd', '/vendor/phpunit', '/boaform', '/hnap1', '/owa/auth', '/autodiscover/autodiscover.xml',
  '/_ignition/', '/id_rsa', '/web.config',
];

export type NoiseKind = 'static' | 'probe' | 'scanner';

/** Why a request is not counted as API traffic, or null when it is. */
export function noiseOf(path: string): NoiseKind | null {
  const question = path.indexOf('?');
  const bare = (question < 0 ? path : path.slice(0, question)).toLowerCase();
  if (PROBE_PATHS.has(bare) || bare.startsWith('/.well-known/')) return bare === '/.well-known/security.txt' ? 'probe' : 'probe';
  for (const marker of SCANNER_MARKERS) if (bare.includes(marker)) return 'scanner';
  const slash = bare.lastIndexOf('/');
  const dot = bare.lastIndexOf('.');
  if (dot > slash) {
    const extension = bare.slice(dot + 1);
    if (STATIC_EXTENSIONS.has(extension)) return 'static';
    if (extension === 'php' || extension === 'asp' || extension === 'aspx' || extension === 'jsp' || extension === 'cgi' || extension === 'bak' || extension === 'sql' || extension === 'zip') return 'scanner';
  }
  return null;
}
