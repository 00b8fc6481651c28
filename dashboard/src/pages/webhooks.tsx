import { useState } from 'react';
import { api } from '../api.ts';
import { ActionButton, Async, Badge, Page, formatTime, useApi } from '../ui.tsx';

interface Webhook {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  state: 'active' | 'paused';
  consecutive_failures: number;
  paused_at: string | null;
  paused_reason: string | null;
  created_at: string;
}

interface Delivery {
  id: string;
  event: string;
  state: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  created_at: string;
}

interface FailureSummary {
  counts: Record<string, number>;
  last_error: { at: string; status_class: string; status_code: number | null; error: string | null } | null;
  next_retry_at: string | null;
  deliveries: { pending: number; held: number; confirmed: number; exhausted: number };
}

export function Webhooks() {
  const list = useApi<{ webhooks: Webhook[] }>('/api/v1/webhooks');
  const [open, setOpen] = useState<string | null>(null);
  return (
    <Page title="Webhooks" needs="admin" intro="Signed event deliveries to your endpoints. After 5 exhausted deliveries in a row an endpoint is paused; re-enable it once it answers again, and the held deliveries are sent.">
      <Async loaded={list} what="webhook endpoints" isEmpty={(data) => data.webhooks.length === 0} empty="No webhook endpoints. Create one with POST /api/v1/webhooks (docs/webhooks.md).">
        {(data) => (
          <ul className="cards-list">
            {data.webhooks.map((hook) => (
              <li key={hook.id} className="item" aria-label={`Webhook ${hook.url}`}>
                <div className="item-head">
                  <code className="url">{hook.url}</code>
                  <Badge tone={hook.state === 'paused' ? 'block' : 'ok'}>{hook.state}</Badge>
                </div>
                <p className="muted small">{hook.events.join(', ')}{hook.description ? ` · ${hook.description}` : ''}</p>
                {hook.state === 'paused' ? (
                  <p>
                    Paused {formatTime(hook.paused_at)}{hook.paused_reason ? ` (${hook.paused_reason})` : ''} after {hook.consecutive_failures} failures.{' '}
                    <ActionButton needs="admin" kind="primary" onAction={async () => {
                      await api.patch(`/api/v1/webhooks/${hook.id}`, { state: 'active' });
                      list.reload();
                    }}>
                      Re-enable
                    </ActionButton>
                  </p>
                ) : hook.consecutive_failures > 0 ? <p>{hook.consecutive_failures} consecutive failures.</p> : null}
                <button type="button" aria-expanded={open === hook.id} onClick={() => setOpen(open === hook.id ? null : hook.id)}>
                  {open === hook.id ? 'Hide deliveries' : 'Deliveries and failures'}
                </button>
                {open === hook.id ? <Deliveries id={hook.id} /> : null}
              </li>
            ))}
          </ul>
        )}
      </Async>
    </Page>
  );
}

function Deliveries({ id }: { id: string }) {
  const summary = useApi<FailureSummary>(`/api/v1/webhooks/${id}/failures/summary`);
  const deliveries = useApi<{ deliveries: Delivery[] }>(`/api/v1/webhooks/${id}/deliveries?limit=20`);
  return (
    <div className="deliveries">
      <Async loaded={summary} what="the failure summary">
        {(data) => (
          <dl className="facts">
            <dt>Deliveries</dt>
            <dd>{data.deliveries.confirmed} confirmed, {data.deliveries.pending} pending, {data.deliveries.held} held, {data.deliveries.exhausted} exhausted</dd>
            <dt>Attempts (30 days)</dt>
            <dd>{Object.entries(data.counts).filter(([, count]) => count > 0).map(([status, count]) => `${status}: ${count}`).join(', ') || 'none'}</dd>
            <dt>Last error</dt>
            <dd>{data.last_error ? `${formatTime(data.last_error.at)}: ${data.last_error.error ?? data.last_error.status_class}` : 'none'}</dd>
            <dt>Next retry</dt>
            <dd>{formatTime(data.next_retry_at)}</dd>
          </dl>
        )}
      </Async>
      <Async loaded={deliveries} what="deliveries" isEmpty={(data) => data.deliveries.length === 0} empty="No deliveries yet.">
        {(data) => (
          <table className="list" tabIndex={0}>
            <caption className="visually-hidden">Recent deliveries</caption>
            <thead><tr><th scope="col">Event</th><th scope="col">State</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col">Created</th></tr></thead>
            <tbody>
              {data.deliveries.map((delivery) => (
                <tr key={delivery.id}>
                  <td>{delivery.event}</td>
                  <td><Badge tone={delivery.state === 'exhausted' ? 'block' : delivery.state === 'confirmed' ? 'ok' : 'alert'}>{delivery.state}</Badge></td>
                  <td>{delivery.attempts}</td>
                  <td>{delivery.last_status ?? delivery.last_error ?? '—'}</td>
                  <td>{formatTime(delivery.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Async>
    </div>
  );
}
