/**
 * Active health checks of gateway backends: a GET of the configured path every interval; a
 * status below 500 is healthy, 5xx, a timeout or a refused connection is a failure. After
 * `unhealthyAfter` consecutive failures the backend is down: svc_gateway_health{gateway_id} is 0,
 * clients get 503 BACKEND_DOWN, and gateway.down is emitted once per outage. One success brings it
 * back. Checks run only between start() and close(); each replica checks on its own.
 *
 * A gateway whose `health_check` is null is never probed (and always healthy). Probes go through
 * the forwarder's pooled agent, and a round is shaped so that they can share its keep-alive
 * connections: identical probes (same URL and timeout) are made once and their answer counts for
 * every gateway that asked, probes to one origin run at most PROBES_PER_ORIGIN at a time, and each
 * gateway's first check falls at a point of its interval fixed by its id, so gateways created
 * together do not all probe in the same second.
 */
import { request as undiciRequest, type Dispatcher } from 'undici';
import type { EventBus } from '../platform/events.ts';
import type { Metrics } from '../platform/metrics.ts';
import { createHash } from 'node:crypto';
import { joinPath } from './forward.ts';
import type { Gateway, HealthCheckSettings } from './types.ts';

export interface HealthState {
  healthy: boolean;
  consecutiveFailures: number;
  firstFailureAt: Date | null;
  lastStatus: number | null;
  lastCheckedAt: Date | null;
}

/** Probes in flight to one backend origin in a round: they share that many pooled connections. */
export const PROBES_PER_ORIGIN = 2;

export interface HealthChecker {
  /** Whether traffic may go to this gateway's backend (unknown gateways are healthy). */
  isHealthy(gatewayId: string): boolean;
  state(gatewayId: string): HealthState | null;
  /** Runs one check of a gateway now; a gateway without health checks is not probed (healthy, its state forgotten). */
  check(gateway: Gateway): Promise<HealthState>;
  /** Checks these gateways now, as one round of the timer does (coalesced, a few at a time per origin). */
  checkAll(gateways: readonly Gateway[]): Promise<void>;
  start(list: () => Promise<Gateway[]>): void;
  forget(gatewayId: string): void;
  close(): Promise<void>;
}

/** A gateway's health-check settings, or null when it is not checked. */
export function healthSettings(gateway: Gateway): HealthCheckSettings | null {
  return gateway.settings.healthCheck;
}

/** Where in its interval a gateway's first check falls (0 ≤ offset < interval), fixed by its id. */
function firstOffsetMs(id: string, intervalMs: number): number {
  return createHash('sha256').update(id).digest().readUInt32BE(0) % intervalMs;
}

/** Runs tasks with at most `limit` in flight. */
async function inTurn(tasks: readonly (() => Promise<void>)[], limit: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      await tasks[next++]!();
      // undici marks the connection free on the next turn: the next probe then reuses it.
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
}

export function createHealthChecker(deps: { events: EventBus; metrics: Pick<Metrics, 'gatewayHealth'>; dispatcher?: Dispatcher; tickMs?: number }): HealthChecker {
  const states = new Map<string, HealthState>();
  const due = new Map<string, number>();
  let timer: NodeJS.Timeout | null = null;
  let running = false;

  const forget = (id: string) => {
    states.delete(id);
    due.delete(id);
    deps.metrics.gatewayHealth.remove({ gateway_id: id, kind: 'api_gateway' });
  };

  /** One GET of a probe URL: its status (null when none came) and whether it counts as healthy. */
  const probe = async (url: URL, timeoutMs: number): Promise<{ status: number | null; ok: boolean }> => {
    try {
      const answer = await undiciRequest(url, {
        method: 'GET',
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        headers: { 'user-agent': 'svc-health-check/1' },
        ...(deps.dispatcher === undefined ? {} : { dispatcher: deps.dispatcher }),
      });
      // Read to the end (up to undici's limit), so the connection goes back to the pool.
      await answer.body.dump();
      return { status: answer.statusCode, ok: answer.statusCode < 500 };
    } catch {
      return { status: null, ok: false };
    }
  };

  const probeUrl = (gateway: Gateway, settings: HealthCheckSettings): URL | null => {
    try {
      const backend = new URL(gateway.backendUrl);
      return new URL(joinPath(backend.pathname, settings.path), backend.origin);
    } catch {
      return null;
    }
  };

  /** Records a probe's outcome for a gateway: the state, the gauge, and gateway.down once per outage. */
  const record = (gateway: Gateway, settings: HealthCheckSettings, outcome: { status: number | null; ok: boolean }): HealthState => {
    const state = states.get(gateway.id) ?? { healthy: true, consecutiveFailures: 0, firstFailureAt: null, lastStatus: null, lastCheckedAt: null };
    states.set(gateway.id, state);
    const { status, ok } = outcome;
    state.lastStatus = status;
    state.lastCheckedAt = new Date();
    if (ok) {
      state.consecutiveFailures = 0;
      state.firstFailureAt = null;
      state.healthy = true;
    } else {
      state.consecutiveFailures += 1;
      state.firstFailureAt ??= new Date();
      if (state.healthy && state.consecutiveFailures >= settings.unhealthyAfter) {
        state.healthy = false;
        deps.events.emit(
          gateway.orgId,
          'gateway.down',
          {
            gateway_name: gateway.name,
            backend_url: gateway.backendUrl,
            check_type: 'http',
            http_status: status ?? 0,
            consecutive_failures: state.consecutiveFailures,
            first_failure_at: state.firstFailureAt.toISOString(),
          },
          { gatewayId: gateway.id },
        );
      }
    }
    deps.metrics.gatewayHealth.set({ gateway_id: gateway.id, kind: 'api_gateway' }, state.healthy ? 1 : 0);
    return state;
  };

  const check = async (gateway: Gateway): Promise<HealthState> => {
    const settings = healthSettings(gateway);
    if (settings === null) {
      if (states.has(gateway.id)) forget(gateway.id);
      return { healthy: true, consecutiveFailures: 0, firstFailureAt: null, lastStatus: null, lastCheckedAt: null };
    }
    const url = probeUrl(gateway, settings);
    return record(gateway, settings, url === null ? { status: null, ok: false } : await probe(url, settings.timeoutMs));
  };

  const checkAll = async (gateways: readonly Gateway[]): Promise<void> => {
    // Identical probes are made once; the probes of one origin run a few at a time.
    const probes = new Map<string, { url: URL; timeoutMs: number; gateways: { gateway: Gateway; settings: HealthCheckSettings }[] }>();
    for (const gateway of gateways) {
      const settings = healthSettings(gateway);
      if (settings === null) {
        if (states.has(gateway.id)) forget(gateway.id);
        continue;
      }
      const url = probeUrl(gateway, settings);
      if (url === null) {
        record(gateway, settings, { status: null, ok: false });
        continue;
      }
      const key = `${settings.timeoutMs} ${url.href}`;
      const entry = probes.get(key) ?? { url, timeoutMs: settings.timeoutMs, gateways: [] };
      entry.gateways.push({ gateway, settings });
      probes.set(key, entry);
    }
    const byOrigin = new Map<string, (() => Promise<void>)[]>();
    for (const entry of probes.values()) {
      const tasks = byOrigin.get(entry.url.origin) ?? [];
      tasks.push(async () => {
        const outcome = await probe(entry.url, entry.timeoutMs);
        for (const { gateway, settings } of entry.gateways) record(gateway, settings, outcome);
      });
      byOrigin.set(entry.url.origin, tasks);
    }
    await Promise.all([...byOrigin.values()].map((tasks) => inTurn(tasks, PROBES_PER_ORIGIN)));
  };

  return {
    isHealthy: (id) => states.get(id)?.healthy ?? true,
    state: (id) => states.get(id) ?? null,
    check,
    checkAll,
    start(list) {
      if (timer !== null) return;
      timer = setInterval(() => {
        if (running) return;
        running = true;
        void list()
          .then(async (gateways) => {
            const now = Date.now();
            const checked = new Set(gateways.filter((gateway) => gateway.settings.healthCheck !== null).map((gateway) => gateway.id));
            for (const id of [...states.keys(), ...due.keys()]) if (!checked.has(id)) forget(id);
            const round: Gateway[] = [];
            for (const gateway of gateways) {
              const settings = healthSettings(gateway);
              if (settings === null) continue;
              const intervalMs = settings.intervalSeconds * 1_000;
              const at = due.get(gateway.id);
              if (at === undefined) {
                due.set(gateway.id, now + firstOffsetMs(gateway.id, intervalMs));
                continue;
              }
              if (at > now) continue;
              due.set(gateway.id, now + intervalMs);
              round.push(gateway);
            }
            await checkAll(round);
          })
          .catch(() => undefined)
          .finally(() => {
            running = false;
          });
      }, deps.tickMs ?? 1_000);
      timer.unref();
    },
    forget,
    async close() {
      if (timer !== null) clearInterval(timer);
      timer = null;
    },
  };
}
