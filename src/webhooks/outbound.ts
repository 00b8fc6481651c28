/**
 * Connect-time SSRF guard for outbound webhook POSTs. Security posture: the URL was checked
 * when saved and is checked again before each attempt, but a host name can resolve to another
 * address a moment later (DNS rebinding). This `lookup` is handed to undici's connector, so the
 * address actually connected to is the one checked: every resolved address must be public
 * unless ALLOW_PRIVATE_TARGETS is set. Literal IP hosts skip lookup; assertPublicUrl covers them.
 */
export { guardedLookup } from '../platform/ssrf.ts';
