/**
 * SSRF guard for every URL a user supplies (webhook URLs, MCP upstreams, gateway backends,
 * provider base URLs). Posture: deny by default. Only http and https; no credentials in the
 * URL; the host is resolved and EVERY address it resolves to must be public — loopback,
 * private, carrier-grade NAT, link-local (cloud metadata 169.254.169.254, fd00:ec2::254),
 * multicast, reserved and IPv4-mapped/NAT64 forms of those are refused — unless the
 * deployment sets ALLOW_PRIVATE_TARGETS=true. The WHATWG URL parser already turns decimal,
 * hex and octal IPv4 spellings (http://2130706433/) into dotted form before the check.
 * Callers must not follow redirects, or must re-check each Location with this function.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
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

const LOCAL_USE_NAT64 = new BlockList();
LOCAL_USE_NAT64.addSubnet('64:ff9b:1::', 48, 'ipv6');

/** True when the address is loopback, private, link-local or otherwise not publicly routable. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  const lower = address.toLowerCase();
  // The NAT64 local-use prefix (RFC 8215) is not globally routable, whatever IPv4 it embeds.
  if (LOCAL_USE_NAT64.check(lower, 'ipv6')) return true;
  // IPv4 inside IPv6 in any spelling (the URL parser writes [::ffff:127.0.0.1] as ::ffff:7f00:1):
  // mapped, SIIT, IPv4-compatible, NAT64 64:ff9b::/96 and 6to4 2002::/16.
  const embedded = embeddedIpv4(lower);
  if (embedded !== null) return blocked.check(embedded, 'ipv4');
  return blocked.check(lower, 'ipv6');
}

/** The IPv4 address embedded in an IPv6 address (mapped, SIIT, compatible, NAT64, 6to4), or null. */
function embeddedIpv4(address: string): string | null {
  let text = address.split('%')[0]!;
  const groups: number[] = [];
  const dotted = /:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  if (dotted?.[1]) {
    const octets = dotted[1].split('.').map(Number);
    text = `${text.slice(0, dotted.index + 1)}${((octets[0]! << 8) | octets[1]!).toString(16)}:${((octets[2]! << 8) | octets[3]!).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const fill = tail === undefined ? 0 : 8 - headGroups.length - tailGroups.length;
  for (const group of [...headGroups, ...Array<string>(Math.max(0, fill)).fill('0'), ...tailGroups]) groups.push(parseInt(group, 16));
  if (groups.length !== 8 || groups.some((group) => Number.isNaN(group))) return null;
  const v4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  const zero = (from: number, to: number) => groups.slice(from, to).every((group) => group === 0);
  if (zero(0, 5) && groups[5] === 0xffff) return v4(groups[6]!, groups[7]!); // ::ffff:a.b.c.d
  if (zero(0, 4) && groups[4] === 0xffff && groups[5] === 0) return v4(groups[6]!, groups[7]!); // ::ffff:0:a.b.c.d
  if (zero(0, 6) && (groups[6] !== 0 || groups[7]! > 1)) return v4(groups[6]!, groups[7]!); // ::a.b.c.d
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zero(2, 6)) return v4(groups[6]!, groups[7]!); // NAT64
  if (groups[0] === 0x2002) return v4(groups[1]!, groups[2]!); // 6to4
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
  if (options.allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (isIP(host) !== 0) {
    addresses = [host];
  } else {
    try {
      addresses = options.resolve
        ? await options.resolve(host)
        : (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
    } catch {
      throw new SvcError('VALIDATION_FAILED', { message: `${field} host does not resolve`, details: { field } });
    }
  }
  if (addresses.length === 0 || addresses.some(isPrivateAddress)) {
    throw new SvcError('TARGET_FORBIDDEN', { details: { field, setting: 'ALLOW_PRIVATE_TARGETS' } });
  }
  return url;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * Connect-time guard for outbound calls to user-supplied hosts. The URL is checked when saved and
 * again before calls, but a host name can resolve to another address a moment later (DNS
 * rebinding). Handed to undici's connector as `lookup`, it checks the address actually connected
 * to: every resolved address must be public unless `allowPrivate`. Literal IP hosts skip lookup;
 * assertPublicUrl covers them.
 */
export function guardedLookup(policy: { allowPrivate: boolean }) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => {
      if (error !== null) return callback(error, options.all === true ? [] : '');
      if (!policy.allowPrivate && (addresses.length === 0 || addresses.some(({ address }) => isPrivateAddress(address)))) {
        const refusal: NodeJS.ErrnoException = Object.assign(new Error(`${hostname} resolves to a forbidden address`), { code: 'ETARGETFORBIDDEN' });
        return callback(refusal, options.all === true ? [] : '');
      }
      if (options.all === true) return callback(null, addresses);
      const first = addresses[0]!;
      return callback(null, first.address, first.family);
    });
  };
}
