/**
 * For sweeps that send many calls to every route (the OpenAPI conformance sweep, the route
 * fuzzer): the public routes are limited per client address (60 a minute, 10 a second; sign-in
 * and registration stricter), so calls from one address soon get svc's 429 instead of the route's
 * answer to the input. Each call comes from an address of its own, and a sweep can check that
 * none was answered by a limit.
 */

/** The codes of svc's own request limits, not of a route's checks. */
export const THROTTLE_CODES: readonly string[] = ['RATE_LIMITED', 'CONCURRENCY_LIMITED', 'LOGIN_BLOCKED', 'REGISTER_BLOCKED'];

/** A new client address on each call, in 10.`network`.0.0/16. */
export function freshAddresses(network: number): () => string {
  let caller = 0;
  return () => {
    caller += 1;
    return `10.${network}.${Math.floor(caller / 250) % 256}.${(caller % 250) + 1}`;
  };
}

/** Whether an answer came from one of svc's request limits. */
export function throttled(response: { statusCode: number; body: string }): boolean {
  if (response.statusCode !== 429) return false;
  try {
    return THROTTLE_CODES.includes((JSON.parse(response.body) as { error?: { code?: string } }).error?.code ?? '');
  } catch {
    return false;
  }
}
