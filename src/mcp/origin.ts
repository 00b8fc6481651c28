/**
 * Origin and Host validation on the MCP endpoints (DNS-rebinding protection). The Streamable
 * HTTP transport requires it of servers: "Servers MUST validate the Origin header on all incoming
 * connections … If the Origin header is present and invalid, servers MUST respond with HTTP 403".
 *
 * - No `Origin` (SDK clients, desktop agents, curl): not a browser, nothing to check.
 * - An `Origin` is valid when it is listed (MCP_ALLOWED_ORIGINS, or ALLOWED_ORIGINS other than
 *   `*`), when its host is a loopback name (a page served from the user's own machine, never a
 *   rebinding attacker's), or when it is the request's own origin under a host listed in
 *   MCP_ALLOWED_HOSTS. A rebinding page sends its own origin with a matching `Host`
 *   (`evil.example.com`), so "same origin" alone proves nothing unless the host is known.
 * - With MCP_ALLOWED_HOSTS set, a `Host` not listed is refused whether or not `Origin` is sent.
 *
 * Pure: the routes pass the headers in and turn a refusal into MCP_ORIGIN_REFUSED /
 * MCP_HOST_REFUSED (403).
 */

export interface OriginPolicy {
  /** Normalized origins (`https://app.example.com`), or `*` to switch the Origin check off. */
  readonly allowedOrigins: readonly string[];
  /** Lower-case host names; empty = any Host. */
  readonly allowedHosts: readonly string[];
}

export type OriginRefusal = { code: 'MCP_ORIGIN_REFUSED'; origin: string } | { code: 'MCP_HOST_REFUSED'; host: string };

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

function parse(value: string): URL | null {
  try {
    return new URL(value);
  } catch {
    return null;
  }
}

/** The host name of a Host header value (port and case dropped), or null when it is not one. */
function hostnameOf(host: string): string | null {
  return parse(`http://${host}`)?.hostname ?? null;
}

/** Why the request must be refused, or null when it may go on. `host` is the request's Host (behind a trusted proxy, X-Forwarded-Host). */
export function checkOrigin(policy: OriginPolicy, host: string | undefined, origin: string | undefined): OriginRefusal | null {
  // Any Host and no Origin (SDK clients, agents): nothing to parse, nothing to check.
  if (policy.allowedHosts.length === 0 && origin === undefined) return null;
  const hostname = host === undefined || host === '' ? null : hostnameOf(host);
  if (policy.allowedHosts.length > 0 && (hostname === null || !policy.allowedHosts.includes(hostname))) return { code: 'MCP_HOST_REFUSED', host: (host ?? '').slice(0, 256) };
  if (origin === undefined || policy.allowedOrigins.includes('*')) return null;
  const url = /^https?:\/\//i.test(origin) ? parse(origin) : null;
  if (url !== null) {
    if (policy.allowedOrigins.includes(url.origin)) return null;
    if (LOOPBACK.has(url.hostname)) return null;
    if (hostname !== null && policy.allowedHosts.includes(hostname) && host !== undefined && url.host === parse(`${url.protocol}//${host}`)?.host) return null;
  }
  return { code: 'MCP_ORIGIN_REFUSED', origin: origin.slice(0, 256) };
}
