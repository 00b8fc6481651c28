import { useMemo, useState } from 'react';
import { Link } from 'react-router';
import { Async, ChartView, DECISION_COLORS, Page, bucketLabel, bucketStarts, useApi } from '../ui.tsx';
import type { GatewayUsage } from './ai-gateway.tsx';

export interface ThreatSummary {
  from: string;
  to: string;
  bucket: 'hour' | 'day';
  buckets: Array<{ start: string; total: number; by_decision: Record<string, number>; by_pillar: Record<string, number> }>;
  totals: { total: number; by_decision: Record<string, number>; by_pillar: Record<string, number> };
}

const RANGES = {
  '24h': { hours: 24, bucket: 'hour' },
  '7d': { hours: 24 * 7, bucket: 'day' },
  '30d': { hours: 24 * 30, bucket: 'day' },
} as const;
const DECISIONS = ['log', 'alert', 'challenge', 'block'];


export function Overview() {
  const [range, setRange] = useState<keyof typeof RANGES>('24h');
  // The window is fixed when the range is chosen (a new Date every render would reload forever).
  const path = useMemo(() => {
    const to = new Date();
    const from = new Date(to.getTime() - RANGES[range].hours * 3_600_000);
    return `/api/v1/threats/summary?from=${encodeURIComponent(from.toISOString())}&to=${encodeURIComponent(to.toISOString())}&bucket=${RANGES[range].bucket}`;
  }, [range]);
  const summary = useApi<ThreatSummary>(path);
  const usage = useApi<GatewayUsage>(path.replace('/api/v1/threats/summary', '/api/v1/gateway/usage'));
  return (
    <Page title="Overview" intro="Findings of every pillar: requests scored log or above, by decision and by pillar over time.">
      <div className="toolbar" role="group" aria-label="Time range">
        {(Object.keys(RANGES) as Array<keyof typeof RANGES>).map((key) => (
          <button key={key} type="button" aria-pressed={range === key} onClick={() => setRange(key)}>
            Last {key}
          </button>
        ))}
      </div>
      <Async loaded={summary} what="the summary">
        {(data) => <SummaryView data={data} />}
      </Async>
      <h2>Requests over time</h2>
      <p className="muted">
        svc keeps no per-organization count of every request over time: requests through protected API gateways and MCP servers
        appear here only as findings (above), and as totals per gateway in the Prometheus metric <code>svc_requests_total</code>.
        AI-gateway completions are counted per model and hour:
      </p>
      <Async loaded={usage} what="AI-gateway completions" isEmpty={(data) => data.buckets.length === 0} empty="No AI-gateway completions in this period.">
        {(data) => <CompletionsView data={data} />}
      </Async>
    </Page>
  );
}

function SummaryView({ data }: { data: ThreatSummary }) {
  const labels = useMemo(() => data.buckets.map((bucket) => bucketLabel(bucket.start, data.bucket)), [data]);
  const byDecision = useMemo(() => DECISIONS.map((decision) => ({ label: decision, color: DECISION_COLORS[decision], data: data.buckets.map((bucket) => bucket.by_decision[decision] ?? 0) })), [data]);
  const pillars = Object.keys(data.totals.by_pillar).sort();
  const byPillar = useMemo(() => pillars.map((pillar) => ({ label: pillar, data: data.buckets.map((bucket) => bucket.by_pillar[pillar] ?? 0) })), [data, pillars.join()]);
  return (
    <>
      <div className="cards">
        <div className="card"><span className="figure">{data.totals.total}</span> findings</div>
        {DECISIONS.map((decision) => (
          <div className="card" key={decision}>
            <span className="figure">{data.totals.by_decision[decision] ?? 0}</span> <Link to={`/threats?decision=${decision}`}>{decision}</Link>
          </div>
        ))}
      </div>
      {data.totals.total === 0 ? (
        <p className="state empty">No findings in this period. Traffic through a protected gateway, the AI gateway or an MCP server appears here once a request scores log or above.</p>
      ) : (
        <div className="charts">
          <ChartView type="bar" stacked labels={labels} datasets={byDecision} label="Findings by decision over time" />
          <ChartView type="line" labels={labels} datasets={byPillar} label="Findings by pillar over time" />
        </div>
      )}
    </>
  );
}

function CompletionsView({ data }: { data: GatewayUsage }) {
  const starts = useMemo(() => bucketStarts(data.from, data.to, data.bucket), [data]);
  const labels = useMemo(() => starts.map((start) => bucketLabel(start, data.bucket)), [starts, data.bucket]);
  const datasets = useMemo(() => {
    const index = new Map(starts.map((start, position) => [start, position]));
    const counts = starts.map(() => 0);
    for (const row of data.buckets) {
      const position = index.get(row.start);
      if (position !== undefined) counts[position]! += row.requests;
    }
    return [{ label: 'AI-gateway completions', data: counts }];
  }, [data, starts]);
  return <ChartView type="bar" labels={labels} datasets={datasets} label="AI-gateway completions over time" />;
}
