/**
 * SSRF guard for every URL a user supplies (webhook URLs, MCP upstreams, gateway backends,
 * provider base URLs). Posture: deny by default. Only http and https; no credentials in the
 * URL; the host is resolved and EVERY address it resolves to must be public — loopback,
 * private, carrier-grade NAT, link-local (cloud metadata 169.254.169.254, fd00:ec2::254),
 * multicast, reserved and IPv4-mapped/NAT64 forms of those are refused — unless the
 * deployment sets ALLOW_PRIVATE_TARGETS=true (a name must still resolve). The WHATWG URL parser already turns decimal,
 * hex and octal IPv4 spellings (http://2130706433/) into dotted form before the check.
 * Callers must not follow redirects, or must re-check each Location with this function.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { buildConnector } from 'undici';
import { SvcError } from './errors.ts';

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['100::', 64],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** The IPv6 global unicast space (RFC 4291, IANA): everything outside it is refused, apart from IPv4 embedded in the forms below. */
const GLOBAL_UNICAST = new BlockList();
GLOBAL_UNICAST.addSubnet('2000::', 3, 'ipv6');
/** Special-purpose space inside 2000::/3 that is not globally reachable (IANA IPv6 special-purpose registry, RFC 9637). */
for (const [network, prefix] of [
  ['2001:2::', 48], // benchmarking
  ['2001:10::', 28], // ORCHID (deprecated)
  ['3fff::', 20], // documentation
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/**
 * True when the address is loopback, private, link-local or otherwise not publicly routable.
 * IPv6 is judged deny-by-default: outside 2000::/3 only the forms that embed an IPv4 address
 * (mapped, SIIT, compatible, the NAT64 well-known prefix 64:ff9b::/96) pass, and then only when
 * the IPv4 address is public; 6to4 (2002::/16) and Teredo (2001::/32) are judged by the IPv4
 * addresses they embed. The rest of 64:ff9b::/32, the NAT64 local-use prefix 64:ff9b:1::/48
 * (RFC 8215: not globally reachable, whatever it embeds) and every other reserved block are refused.
 */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  const bare = address.split('%')[0]!.toLowerCase();
  const groups = ipv6Groups(bare);
  if (groups === null) return true;
  const embedded = embeddedIpv4(groups);
  if (embedded !== null) return embedded.some((ipv4) => blocked.check(ipv4, 'ipv4'));
  if (!GLOBAL_UNICAST.check(bare, 'ipv6')) return true;
  return blocked.check(bare, 'ipv6');
}

/** The eight 16-bit groups of an IPv6 address in any spelling (a trailing dotted IPv4 included), or null. */
function ipv6Groups(address: string): number[] | null {
  let text = address;
  const dotted = /:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  if (dotted?.[1]) {
    const octets = dotted[1].split('.').map(Number);
    text = `${text.slice(0, dotted.index + 1)}${((octets[0]! << 8) | octets[1]!).toString(16)}:${((octets[2]! << 8) | octets[3]!).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const fill = tail === undefined ? 0 : 8 - headGroups.length - tailGroups.length;
  const groups = [...headGroups, ...Array<string>(Math.max(0, fill)).fill('0'), ...tailGroups].map((group) => parseInt(group, 16));
  return groups.length === 8 && groups.every((group) => !Number.isNaN(group)) ? groups : null;
}

/**
 * The IPv4 addresses an IPv6 address stands for (mapped, SIIT, compatible, NAT64 64:ff9b::/96,
 * 6to4, Teredo server and client), or null when it embeds none. The rest of 64:ff9b::/32
 * (including the local-use 64:ff9b:1::/48) answers 0.0.0.0: refused.
 */
function embeddedIpv4(groups: number[]): string[] | null {
  const v4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  const zero = (from: number, to: number) => groups.slice(from, to).every((group) => group === 0);
  if (zero(0, 5) && groups[5] === 0xffff) return [v4(groups[6]!, groups[7]!)]; // ::ffff:a.b.c.d
  if (zero(0, 4) && groups[4] === 0xffff && groups[5] === 0) return [v4(groups[6]!, groups[7]!)]; // ::ffff:0:a.b.c.d
  if (zero(0, 6) && (groups[6] !== 0 || groups[7]! > 1)) return [v4(groups[6]!, groups[7]!)]; // ::a.b.c.d
  if (groups[0] === 0x64 && groups[1] === 0xff9b) return zero(2, 6) ? [v4(groups[6]!, groups[7]!)] : ['0.0.0.0']; // NAT64
  if (groups[0] === 0x2002) return [v4(groups[1]!, groups[2]!)]; // 6to4
  // Teredo (RFC 4380): the server's IPv4, then flags, port and the client's IPv4 with every bit inverted.
  if (groups[0] === 0x2001 && groups[1] === 0) return [v4(groups[2]!, groups[3]!), v4(groups[6]! ^ 0xffff, groups[7]! ^ 0xffff)];
  return null;
}

export interface TargetCheckOptions {
  allowPrivate: boolean;
  /** Field name reported in the error details. */
  field?: string;
  /** Resolver (tests); defaults to the system resolver. */
  resolve?: (host: string) => Promise<string[]>;
}

/** Throws VALIDATION_FAILED for a malformed URL, TARGET_FORBIDDEN for a non-public target. */
export async function assertPublicUrl(raw: string, options: TargetCheckOptions): Promise<URL> {
  const field = options.field ?? 'url';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SvcError('VALIDATION_FAILED', { message: `${field} is not a valid URL`, details: { field } });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new SvcError('VALIDATION_FAILED', { message: `${field} must use http or https`, details: { field } });
  }
  if (url.username !== '' || url.password !== '') {
    throw new SvcError('VALIDATION_FAILED', { message: `${field} must not carry credentials`, details: { field } });
  }
  await assertPublicHost(url.hostname, options);
  return url;
}

/**
 * The host half of {@link assertPublicUrl}, for targets given as host and port rather than a URL
 * (SIEM syslog sinks): the name must resolve, and every address must be public unless
 * `allowPrivate`. Throws VALIDATION_FAILED (does not resolve) or TARGET_FORBIDDEN.
 */
export async function assertPublicHost(hostname: string, options: TargetCheckOptions): Promise<void> {
  const addresses = await addressesOf(hostname, options);
  if (options.allowPrivate) return;
  if (addresses.some(isPrivateAddress)) {
    throw new SvcError('TARGET_FORBIDDEN', { details: { field: options.field ?? 'url', setting: 'ALLOW_PRIVATE_TARGETS' } });
  }
}

/**
 * Whether every address the host stands for is loopback, private or otherwise not publicly
 * routable: where a secret may go over plain http (a receiver on this machine or the private
 * network), since it never crosses the internet. Throws VALIDATION_FAILED when it does not resolve.
 */
export async function isPrivateHost(hostname: string, options: Omit<TargetCheckOptions, 'allowPrivate'> = {}): Promise<boolean> {
  return (await addressesOf(hostname, options)).every(isPrivateAddress);
}

/** The addresses of an IP literal (itself) or a host name (all it resolves to); VALIDATION_FAILED when none. */
async function addressesOf(hostname: string, options: Omit<TargetCheckOptions, 'allowPrivate'>): Promise<string[]> {
  const field = options.field ?? 'url';
  const host = hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) return [host];
  let addresses: string[];
  try {
    addresses = options.resolve ? await options.resolve(host) : (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
  } catch {
    throw new SvcError('VALIDATION_FAILED', { message: `${field} host does not resolve`, details: { field } });
  }
  if (addresses.length === 0) throw new SvcError('VALIDATION_FAILED', { message: `${field} host does not resolve`, details: { field } });
  return addresses;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * Connect-time guard for outbound calls to user-supplied hosts. The URL is checked when saved and
 * again before calls, but a host name can resolve to another address a moment later (DNS
 * rebinding). Handed to undici's connector as `lookup`, it checks the address actually connected
 * to: every resolved address must be public unless `allowPrivate`. Literal IP hosts skip lookup:
 * {@link guardedConnector} checks them.
 */
export function guardedLookup(policy: { allowPrivate: boolean }) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => {
      if (error !== null) return callback(error, options.all === true ? [] : '');
      if (!policy.allowPrivate && (addresses.length === 0 || addresses.some(({ address }) => isPrivateAddress(address)))) {
        return callback(forbiddenTarget(hostname), options.all === true ? [] : '');
      }
      if (options.all === true) return callback(null, addresses);
      const first = addresses[0]!;
      return callback(null, first.address, first.family);
    });
  };
}

function forbiddenTarget(hostname: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${hostname} resolves to a forbidden address`), { code: 'ETARGETFORBIDDEN' });
}

/** Whether a connection to this host (a name, or an IP literal with or without brackets) is refused before any lookup: an IP literal that is not public, unless `allowPrivate`. */
export function isForbiddenLiteral(hostname: string, policy: { allowPrivate: boolean }): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return !policy.allowPrivate && isIP(host) !== 0 && isPrivateAddress(host);
}

/**
 * The connect-time guard for an undici Agent (`connect:`): every new connection's address is
 * checked, whether the host is a name (through {@link guardedLookup}) or an IP literal (which
 * undici connects to without a lookup). A target saved while ALLOW_PRIVATE_TARGETS was on is
 * thereby refused once it is off, at every use (the error's code is ETARGETFORBIDDEN).
 */
export function guardedConnector(policy: { allowPrivate: boolean }, options: { timeout?: number } = {}): buildConnector.connector {
  const connect = buildConnector({ ...options, lookup: guardedLookup(policy) as never });
  return (connectOptions, callback) => {
    if (isForbiddenLiteral(connectOptions.hostname, policy)) {
      callback(forbiddenTarget(connectOptions.hostname), null);
      return;
    }
    connect(connectOptions, callback);
  };
}
