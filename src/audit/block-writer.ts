/**
 * Writes the audit entry the response policy requires for every block: it listens for
 * `threat.blocked` on the service event bus, so whichever pillar blocks a request only emits the
 * event (which also feeds webhooks). Entries are batched per org (up to 100 entries or 50 ms)
 * and appended in one transaction each, so a flood of blocked requests costs one chain-head lock
 * per batch rather than per request. Posture: bounded memory — beyond `maxBacklog` waiting
 * entries, new ones are dropped and counted in a warning log line rather than exhausting the
 * process during an attack; the threat_events table still records each block.
 */
import type { EventBus } from '../platform/events.ts';
import type { Logger } from '../platform/logger.ts';
import type { AuditEntryInput, AuditLog } from './audit-log.ts';

export interface BlockAuditServices {
  readonly audit: AuditLog;
  readonly events: EventBus;
  readonly logger: Logger;
}

export interface BlockAuditWriter {
  /** Writes everything waiting now. */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

const TEXT_FIELDS = ['request_id', 'decision', 'session_id', 'source_ip', 'method', 'path', 'user_agent'] as const;

/** The audit entry for a threat.blocked event's data. */
export function blockEntry(data: Record<string, unknown>, gatewayId: string | null): AuditEntryInput {
  const details: Record<string, unknown> = { gateway_id: gatewayId };
  for (const field of TEXT_FIELDS) if (typeof data[field] === 'string') details[field] = (data[field] as string).slice(0, 512);
  if (typeof data.threat_score === 'number') details.threat_score = data.threat_score;
  if (Array.isArray(data.pattern_ids)) details.pattern_ids = data.pattern_ids.filter((id) => typeof id === 'string').slice(0, 50);
  const requestId = typeof data.request_id === 'string' && data.request_id !== '' ? data.request_id.slice(0, 512) : null;
  return { actor: 'system:response-policy', action: 'threat.blocked', target: requestId, outcome: 'blocked', details };
}

export function startBlockAudit(services: BlockAuditServices, options: { flushMs?: number; batch?: number; maxBacklog?: number } = {}): BlockAuditWriter {
  const { audit } = services;
  const flushMs = options.flushMs ?? 50;
  const batch = options.batch ?? 100;
  const maxBacklog = options.maxBacklog ?? 50_000;
  const waiting = new Map<string, AuditEntryInput[]>();
  const running = new Map<string, Promise<void>>();
  let backlog = 0;
  let dropped = 0;
  let timer: NodeJS.Timeout | null = null;

  const writeOrg = (orgId: string): Promise<void> => {
    const previous = running.get(orgId) ?? Promise.resolve();
    const next = previous.then(async () => {
      for (;;) {
        const entries = waiting.get(orgId);
        if (entries === undefined || entries.length === 0) {
          waiting.delete(orgId);
          return;
        }
        const chunk = entries.splice(0, batch);
        try {
          await audit.appendMany(orgId, chunk);
        } catch (error) {
          services.logger.error({ err: error, org_id: orgId, entries: chunk.length }, 'could not write block audit entries');
        } finally {
          backlog -= chunk.length;
        }
      }
    });
    running.set(orgId, next);
    void next.finally(() => {
      if (running.get(orgId) === next) running.delete(orgId);
    });
    return next;
  };

  const flush = async () => {
    if (timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
    if (dropped > 0) {
      services.logger.warn({ dropped }, 'block audit backlog full: entries dropped');
      dropped = 0;
    }
    await Promise.all([...waiting.keys()].map(writeOrg));
  };

  const unsubscribe = services.events.subscribe((event) => {
    if (event.event !== 'threat.blocked') return;
    if (backlog >= maxBacklog) {
      dropped++;
      return;
    }
    const list = waiting.get(event.orgId) ?? [];
    list.push(blockEntry(event.data, event.gatewayId));
    waiting.set(event.orgId, list);
    backlog++;
    if (list.length >= batch) void writeOrg(event.orgId);
    else if (timer === null) {
      timer = setTimeout(() => void flush(), flushMs);
      timer.unref();
    }
  });

  const writer: BlockAuditWriter = {
    flush,
    async stop() {
      unsubscribe();
      await flush();
      await Promise.all([...running.values()]);
    },
  };
  return writer;
}
