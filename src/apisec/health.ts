/**
 * Active health checks of gateway backends: a GET of the configured path every interval; a
 * status below 500 is healthy, 5xx, a timeout or a refused connection is a failure. After
 * `unhealthyAfter` consecutive failures the backend is down: svc_gateway_health{gateway_id} is 0,
 * clients get 503 BACKEND_DOWN, and gateway.down is emitted once per outage. One success brings it
 * back. Checks run only between start() and close(); each replica checks on its own.
 */
import { request as undiciRequest, type Dispatcher } from 'undici';
import type { EventBus } from '../platform/events.ts';
import type { Metrics } from '../platform/metrics.ts';
import { joinPath } from './forward.ts';
import type { Gateway, HealthCheckSettings } from './types.ts';
import { DEFAULT_HEALTH_CHECK } from './types.ts';

export interface HealthState {
  healthy: boolean;
  consecutiveFailures: number;
  firstFailureAt: Date | null;
  lastStatus: number | null;
  lastCheckedAt: Date | null;
}

export interface HealthChecker {
  /** Whether traffic may go to this gateway's backend (unknown gateways are healthy). */
  isHealthy(gatewayId: string): boolean;
  state(gatewayId: string): HealthState | null;
  /** Runs one check of a gateway now (also what the timer does). */
  check(gateway: Gateway): Promise<HealthState>;
  start(list: () => Promise<Gateway[]>): void;
  forget(gatewayId: string): void;
  close(): Promise<void>;
}

export function healthSettings(gateway: Gateway): HealthCheckSettings {
  return gateway.settings.healthCheck ?? DEFAULT_HEALTH_CHECK;
}

export function createHealthChecker(deps: { events: EventBus; metrics: Pick<Metrics, 'gatewayHealth'>; dispatcher?: Dispatcher; tickMs?: number }): HealthChecker {
  const states = new Map<string, HealthState>();
  const due = new Map<string, number>();
  let timer: NodeJS.Timeout | null = null;
  let running = false;

  const check = async (gateway: Gateway): Promise<HealthState> => {
    const settings = healthSettings(gateway);
    const state = states.get(gateway.id) ?? { healthy: true, consecutiveFailures: 0, firstFailureAt: null, lastStatus: null, lastCheckedAt: null };
    states.set(gateway.id, state);
    let status: number | null = null;
    let ok = false;
    try {
      const backend = new URL(gateway.backendUrl);
      const answer = await undiciRequest(new URL(joinPath(backend.pathname, settings.path), backend.origin), {
        method: 'GET',
        headersTimeout: settings.timeoutMs,
        bodyTimeout: settings.timeoutMs,
        headers: { 'user-agent': 'svc-health-check/1' },
        ...(deps.dispatcher === undefined ? {} : { dispatcher: deps.dispatcher }),
      });
      status = answer.statusCode;
      await answer.body.dump();
      ok = status < 500;
    } catch {
      ok = false;
    }
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

  return {
    isHealthy: (id) => states.get(id)?.healthy ?? true,
    state: (id) => states.get(id) ?? null,
    check,
    start(list) {
      if (timer !== null) return;
      timer = setInterval(() => {
        if (running) return;
        running = true;
        void list()
          .then(async (gateways) => {
            const now = Date.now();
            const live = new Set(gateways.map((gateway) => gateway.id));
            for (const id of states.keys()) if (!live.has(id)) states.delete(id);
            await Promise.all(
              gateways
                .filter((gateway) => (due.get(gateway.id) ?? 0) <= now)
                .map((gateway) => {
                  due.set(gateway.id, now + healthSettings(gateway).intervalSeconds * 1_000);
                  return check(gateway);
                }),
            );
          })
          .catch(() => undefined)
          .finally(() => {
            running = false;
          });
      }, deps.tickMs ?? 1_000);
      timer.unref();
    },
    forget(id) {
      states.delete(id);
      due.delete(id);
      deps.metrics.gatewayHealth.remove({ gateway_id: id, kind: 'api_gateway' });
    },
    async close() {
      if (timer !== null) clearInterval(timer);
      timer = null;
    },
  };
}
