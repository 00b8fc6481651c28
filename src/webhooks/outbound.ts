/**
 * Connect-time SSRF guard for outbound webhook POSTs. Security posture: the URL was checked
 * when saved and is checked again before each attempt, but a host name can resolve to another
 * address a moment later (DNS rebinding). This `lookup` is handed to undici's connector, so the
 * address actually connected to is the one checked: every resolved address must be public
 * unless ALLOW_PRIVATE_TARGETS is set. Literal IP hosts skip lookup; assertPublicUrl covers them.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isPrivateAddress } from '../platform/ssrf.ts';

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

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
