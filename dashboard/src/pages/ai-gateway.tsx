import { useId, useMemo, useState, type FormEvent } from 'react';
import { api, ApiError } from '../api.ts';
import { Async, Badge, ChartView, ErrorNotice, JsonEditor, Page, bucketLabel, bucketStarts, formatTime, useApi, useCan } from '../ui.tsx';

interface ProviderKey {
  provider: string;
  key: string;
  base_url: string | null;
  updated_at: string;
}

interface Budget {
  day: string;
  plan: string;
  daily_token_budget: number;
  tokens_used: number;
  tokens_remaining: number;
  daily_usd_cap: number | null;
  usd_used: number | null;
}

interface ProviderHealth {
  gateway_id: string;
  state: 'closed' | 'open' | 'half_open';
  healthy: boolean;
  requests_in_window: number;
  failures_in_window: number;
  failure_rate: number;
  consecutive_failures: number;
  open_until: string | null;
  mean_latency_ms: number | null;
}

export interface GatewayUsage {
  from: string;
  to: string;
  bucket: 'hour' | 'day';
  buckets: Array<{ start: string; provider: string; model: string; requests: number; total_tokens: number; cost_usd: number }>;
  budget: Budget;
  anomalies: Array<{ hour_start: string; spend_usd: number; baseline_mean_usd: number; baseline_stddev_usd: number; z_score: number }>;
}

const USAGE_RANGES = {
  '24h': { hours: 24, bucket: 'hour' },
  '7d': { hours: 24 * 7, bucket: 'day' },
  '30d': { hours: 24 * 30, bucket: 'day' },
} as const;

/** Providers an org may hold a key for (src/platform/providers.ts). */
const PROVIDERS = ['openai', 'azure_openai', 'anthropic', 'gemini', 'vertex_ai', 'bedrock', 'mistral', 'cohere', 'groq', 'together', 'fireworks', 'deepseek', 'xai', 'openrouter', 'ollama', 'openai_compatible'];

export function AiGateway() {
  const isAdmin = useCan('admin');
  const keys = useApi<{ data: ProviderKey[] }>('/api/v1/providers');
  return (
    <Page title="AI gateway" needs="admin" intro="Your upstream provider keys (stored encrypted, shown masked), cost and tokens by model over time with cost anomalies, routing, circuit breakers and the daily budget.">
      <h2>Provider keys</h2>
      <Async loaded={keys} what="provider keys" isEmpty={(data) => data.data.length === 0} empty="No provider keys yet: set one below, then send completions to /api/v1/gateway/completions.">
        {(data) => (
          <table className="list" tabIndex={0}>
            <caption className="visually-hidden">Provider keys</caption>
            <thead><tr><th scope="col">Provider</th><th scope="col">Key</th><th scope="col">Base URL</th><th scope="col">Updated</th></tr></thead>
            <tbody>
              {data.data.map((key) => (
                <tr key={key.provider}><td>{key.provider}</td><td><code>{key.key}</code></td><td>{key.base_url ?? 'default'}</td><td>{formatTime(key.updated_at)}</td></tr>
              ))}
            </tbody>
          </table>
        )}
      </Async>
      <SetProviderKey onSaved={keys.reload} />
      <CostView />
      {isAdmin ? (
        <>
          <BudgetView />
          <Breakers />
          <Routing />
        </>
      ) : <p className="muted">Budget, breaker state and routing are shown to admins.</p>}
    </Page>
  );
}

function SetProviderKey({ onSaved }: { onSaved: () => void }) {
  const allowed = useCan('admin');
  const [error, setError] = useState<ApiError | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const keyId = useId();
  const urlId = useId();
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    const provider = String(form.get('provider'));
    const baseUrl = String(form.get('base_url') ?? '').trim();
    setError(null);
    setSaved(null);
    try {
      await api.put(`/api/v1/providers/${encodeURIComponent(provider)}/key`, { key: String(form.get('key')), ...(baseUrl ? { base_url: baseUrl } : {}) });
      formElement.reset();
      setSaved(provider);
      onSaved();
    } catch (failure) {
      setError(failure instanceof ApiError ? failure : new ApiError(0, 'UNEXPECTED', String(failure), null));
    }
  };
  return (
    <form className="inline-form" onSubmit={(event) => void submit(event)} aria-label="Set or rotate a provider key">
      <label>
        Provider
        <select name="provider" disabled={!allowed}>
          {PROVIDERS.map((provider) => <option key={provider}>{provider}</option>)}
        </select>
      </label>
      <label htmlFor={keyId}>Key</label>
      <input id={keyId} name="key" type="password" autoComplete="off" required disabled={!allowed} />
      <label htmlFor={urlId}>Base URL (optional)</label>
      <input id={urlId} name="base_url" type="url" disabled={!allowed} />
      <button type="submit" className="primary" disabled={!allowed}>Set / rotate</button>
      {allowed ? null : <span className="muted small">needs admin scope</span>}
      {saved ? <span role="status">Key for {saved} saved.</span> : null}
      {error ? <ErrorNotice error={error} /> : null}
    </form>
  );
}

function BudgetView() {
  const budget = useApi<Budget>('/api/v1/gateway/budget');
  return (
    <>
      <h2>Budget today</h2>
      <Async loaded={budget} what="the budget">
        {(data) => <BudgetCharts data={data} />}
      </Async>
    </>
  );
}

function BudgetCharts({ data }: { data: Budget }) {
  const labels = useMemo(() => ['tokens'], []);
  const datasets = useMemo(() => [
    { label: 'used', data: [data.tokens_used] },
    { label: 'remaining', data: [data.tokens_remaining], color: '#a0aec0' },
  ], [data]);
  return (
    <>
      <p>
        {data.day} ({data.plan} plan): {data.tokens_used.toLocaleString()} of {data.daily_token_budget.toLocaleString()} tokens;{' '}
        {data.usd_used !== null ? `$${data.usd_used.toFixed(4)} spent` : 'spend not tracked'}{data.daily_usd_cap !== null ? ` of a $${data.daily_usd_cap} cap` : ', no USD cap'}.
      </p>
      <ChartView type="bar" stacked labels={labels} datasets={datasets} label="Daily token budget: used and remaining" />
    </>
  );
}

function CostView() {
  const [range, setRange] = useState<keyof typeof USAGE_RANGES>('24h');
  const path = useMemo(() => {
    const to = new Date();
    const from = new Date(to.getTime() - USAGE_RANGES[range].hours * 3_600_000);
    return `/api/v1/gateway/usage?from=${encodeURIComponent(from.toISOString())}&to=${encodeURIComponent(to.toISOString())}&bucket=${USAGE_RANGES[range].bucket}`;
  }, [range]);
  const usage = useApi<GatewayUsage>(path);
  return (
    <>
      <h2>Cost by model</h2>
      <div className="toolbar" role="group" aria-label="Cost time range">
        {(Object.keys(USAGE_RANGES) as Array<keyof typeof USAGE_RANGES>).map((key) => (
          <button key={key} type="button" aria-pressed={range === key} onClick={() => setRange(key)}>
            Last {key}
          </button>
        ))}
      </div>
      <Async loaded={usage} what="cost by model" isEmpty={(data) => data.buckets.length === 0 && data.anomalies.length === 0} empty="No completions in this period: cost and tokens per model appear here once requests go through the AI gateway.">
        {(data) => <CostCharts data={data} />}
      </Async>
    </>
  );
}

function CostCharts({ data }: { data: GatewayUsage }) {
  const starts = useMemo(() => bucketStarts(data.from, data.to, data.bucket), [data]);
  const labels = useMemo(() => starts.map((start) => bucketLabel(start, data.bucket)), [starts, data.bucket]);
  const models = useMemo(() => [...new Set(data.buckets.map((row) => `${row.provider}/${row.model}`))].sort(), [data]);
  const series = useMemo(() => {
    const index = new Map(starts.map((start, position) => [start, position]));
    const cost = models.map((model) => ({ label: model, data: starts.map(() => 0) }));
    const tokens = models.map((model) => ({ label: model, data: starts.map(() => 0) }));
    for (const row of data.buckets) {
      const position = index.get(row.start);
      const which = models.indexOf(`${row.provider}/${row.model}`);
      if (position === undefined || which < 0) continue;
      cost[which]!.data[position]! += row.cost_usd;
      tokens[which]!.data[position]! += row.total_tokens;
    }
    return { cost, tokens };
  }, [data, starts, models]);
  const anomalySeries = useMemo(() => {
    const width = data.bucket === 'hour' ? 13 : 10; // the ISO prefix naming the hour or the day
    const spend = starts.map((start) => data.anomalies.filter((anomaly) => anomaly.hour_start.slice(0, width) === start.slice(0, width)).reduce((sum, anomaly) => sum + anomaly.spend_usd, 0));
    return [{ label: 'anomalous hour spend (USD)', color: '#c53030', data: spend }];
  }, [data, starts]);
  const total = data.buckets.reduce((sum, row) => sum + row.cost_usd, 0);
  return (
    <>
      <p>
        ${total.toFixed(4)} over {models.length} model{models.length === 1 ? '' : 's'}; today {data.budget.tokens_used.toLocaleString()} of {data.budget.daily_token_budget.toLocaleString()} tokens
        {data.budget.daily_usd_cap !== null ? ` and $${(data.budget.usd_used ?? 0).toFixed(4)} of a $${data.budget.daily_usd_cap} cap` : ''}.
      </p>
      <div className="charts">
        <ChartView type="bar" stacked fractional labels={labels} datasets={series.cost} label="Cost by model over time (USD)" />
        <ChartView type="line" labels={labels} datasets={series.tokens} label="Tokens by model over time" />
      </div>
      <h3>Cost anomalies</h3>
      {data.anomalies.length === 0 ? (
        <p className="state empty">No cost anomaly in this period (an hour whose spend is 3 standard deviations above the previous 24 hours).</p>
      ) : (
        <>
          <ChartView type="bar" fractional labels={labels} datasets={anomalySeries} label="Spend of the hours flagged as cost anomalies (USD)" />
          <table className="list" tabIndex={0}>
            <caption className="visually-hidden">Cost anomalies</caption>
            <thead><tr><th scope="col">Hour</th><th scope="col">Spend</th><th scope="col">Baseline mean</th><th scope="col">z-score</th></tr></thead>
            <tbody>
              {data.anomalies.map((anomaly) => (
                <tr key={anomaly.hour_start}><td>{formatTime(anomaly.hour_start)}</td><td>${anomaly.spend_usd.toFixed(4)}</td><td>${anomaly.baseline_mean_usd.toFixed(4)}</td><td>{anomaly.z_score}</td></tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </>
  );
}

function Breakers() {
  const health = useApi<{ providers: ProviderHealth[] }>('/api/v1/gateway/providers/health');
  return (
    <>
      <h2>Circuit breakers</h2>
      <Async loaded={health} what="breaker state" isEmpty={(data) => data.providers.length === 0} empty="No provider has been called yet.">
        {(data) => (
          <table className="list" tabIndex={0}>
            <caption className="visually-hidden">Circuit breakers</caption>
            <thead><tr><th scope="col">Provider</th><th scope="col">State</th><th scope="col">Failure rate</th><th scope="col">Mean latency</th><th scope="col">Open until</th></tr></thead>
            <tbody>
              {data.providers.map((provider) => (
                <tr key={provider.gateway_id}>
                  <td>{provider.gateway_id}</td>
                  <td><Badge tone={provider.state === 'closed' ? 'ok' : 'block'}>{provider.state.replace('_', '-')}</Badge></td>
                  <td>{(provider.failure_rate * 100).toFixed(0)} % of {provider.requests_in_window}</td>
                  <td>{provider.mean_latency_ms === null ? '—' : `${provider.mean_latency_ms.toFixed(0)} ms`}</td>
                  <td>{formatTime(provider.open_until)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Async>
    </>
  );
}

function Routing() {
  const routing = useApi<unknown>('/api/v1/gateway/routing');
  return (
    <>
      <h2>Routing</h2>
      {routing.error?.code === 'NOT_FOUND' ? (
        <>
          <p className="state empty">No routing configuration: requests go to the provider the model names. Save one to route by strategy.</p>
          <JsonEditor label="Routing configuration (JSON)" needs="admin" value={{ strategy: 'failover', providers: ['openai', 'anthropic'] }} onSave={async (value) => {
            await api.put('/api/v1/gateway/routing', value);
            routing.reload();
          }} />
        </>
      ) : (
        <Async loaded={routing} what="routing">
          {(data) => <JsonEditor label="Routing configuration (JSON)" needs="admin" value={data} onSave={async (value) => {
            await api.put('/api/v1/gateway/routing', value);
            routing.reload();
          }} />}
        </Async>
      )}
    </>
  );
}
