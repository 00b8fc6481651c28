import { useMemo, useState } from 'react';
import { Async, Badge, ChartView, Page, formatTime, useApi } from '../ui.tsx';

interface Gateway {
  id: string;
  name: string;
  backend_url: string;
  mode: 'monitor' | 'block';
  endpoint: string;
  bot_policy: Record<string, string>;
  health: { status: string };
}

interface Endpoint {
  method: string;
  path: string;
  status: 'documented' | 'shadow' | 'zombie' | 'unknown';
  risk_score: number;
  requests: number;
  last_seen: string;
  data_types: string[];
}

interface GeoRule {
  id: string;
  rule_name: string;
  countries: string[];
  response_code: number;
  gateway_id: string | null;
  enforced: boolean;
}

export function ApiSecurity() {
  const gateways = useApi<{ gateways: Gateway[] }>('/api/v1/gateways');
  const geo = useApi<{ enforced: boolean; rules: GeoRule[] }>('/api/v1/geo-rules');
  const [selected, setSelected] = useState<string | null>(null);
  return (
    <Page title="API security" needs="admin" intro="Protected API gateways (reverse proxies at /gw/{id}), the endpoints their traffic revealed, bot policy and geo rules.">
      <h2>Gateways</h2>
      <Async loaded={gateways} what="gateways" isEmpty={(data) => data.gateways.length === 0} empty="No protected gateways. Create one with POST /api/v1/gateways (docs/apisec.md).">
        {(data) => (
          <ul className="cards-list">
            {data.gateways.map((gateway) => (
              <li key={gateway.id} className="item">
                <div className="item-head">
                  <strong>{gateway.name}</strong> <Badge tone={gateway.mode === 'block' ? 'block' : 'alert'}>{gateway.mode}</Badge> <Badge tone={gateway.health.status === 'down' ? 'block' : 'ok'}>{gateway.health.status}</Badge>
                </div>
                <p className="small">
                  <code>{gateway.endpoint}</code> → <code className="url">{gateway.backend_url}</code>
                </p>
                <p className="small">Bots: {Object.entries(gateway.bot_policy).map(([kind, action]) => `${kind} ${action}`).join(', ') || 'default policy'}</p>
                <button type="button" aria-expanded={selected === gateway.id} onClick={() => setSelected(selected === gateway.id ? null : gateway.id)}>
                  {selected === gateway.id ? 'Hide endpoints' : 'Discovered endpoints'}
                </button>
                {selected === gateway.id ? <Endpoints id={gateway.id} /> : null}
              </li>
            ))}
          </ul>
        )}
      </Async>
      <h2>Geo rules</h2>
      <Async loaded={geo} what="geo rules" isEmpty={(data) => data.rules.length === 0} empty="No geo rules.">
        {(data) => (
          <>
            {data.enforced ? null : <p className="muted">Geo blocking is off (FEATURE_GEO_BLOCKING): rules are stored, not enforced.</p>}
            <table className="list" tabIndex={0}>
              <caption className="visually-hidden">Geo rules</caption>
              <thead><tr><th scope="col">Rule</th><th scope="col">Countries</th><th scope="col">Answer</th><th scope="col">Gateway</th></tr></thead>
              <tbody>
                {data.rules.map((rule) => (
                  <tr key={rule.id}><td>{rule.rule_name}</td><td>{rule.countries.join(', ')}</td><td>{rule.response_code}</td><td>{rule.gateway_id ?? 'all'}</td></tr>
                ))}
              </tbody>
            </table>
          </>
        )}
      </Async>
    </Page>
  );
}

function Endpoints({ id }: { id: string }) {
  const endpoints = useApi<{ endpoints: Endpoint[] }>(`/api/v1/gateways/${id}/endpoints`);
  return (
    <Async loaded={endpoints} what="endpoints" isEmpty={(data) => data.endpoints.length === 0} empty="No endpoints seen yet: they are discovered from traffic through the gateway.">
      {(data) => <EndpointList endpoints={data.endpoints} />}
    </Async>
  );
}

function EndpointList({ endpoints }: { endpoints: Endpoint[] }) {
  const sorted = [...endpoints].sort((left, right) => right.risk_score - left.risk_score);
  const counts = useMemo(() => {
    const statuses = ['documented', 'shadow', 'zombie', 'unknown'];
    return { labels: statuses, datasets: [{ label: 'endpoints', data: statuses.map((status) => endpoints.filter((endpoint) => endpoint.status === status).length) }] };
  }, [endpoints]);
  return (
    <>
      <ChartView type="bar" labels={counts.labels} datasets={counts.datasets} label="Discovered endpoints by status" />
      <table className="list" tabIndex={0}>
        <caption className="visually-hidden">Discovered endpoints</caption>
        <thead><tr><th scope="col">Endpoint</th><th scope="col">Status</th><th scope="col">Risk</th><th scope="col">Requests</th><th scope="col">Data</th><th scope="col">Last seen</th></tr></thead>
        <tbody>
          {sorted.map((endpoint) => (
            <tr key={`${endpoint.method} ${endpoint.path}`}>
              <td><code>{endpoint.method} {endpoint.path}</code></td>
              <td><Badge tone={endpoint.status === 'documented' ? 'ok' : 'alert'}>{endpoint.status}</Badge></td>
              <td>{endpoint.risk_score.toFixed(2)}</td>
              <td>{endpoint.requests}</td>
              <td>{endpoint.data_types.join(', ') || '—'}</td>
              <td>{formatTime(endpoint.last_seen)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
