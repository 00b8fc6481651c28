import { useId, useState, type FormEvent } from 'react';
import { api, ApiError } from '../api.ts';
import { Async, Badge, ErrorNotice, Page, formatTime, useApi, useCan } from '../ui.tsx';

interface Thresholds {
  thresholds: { log_threshold: number; alert_threshold: number; challenge_threshold: number; block_threshold: number };
  updated_at?: string;
}

interface FeatureFlags {
  data: Array<{ flag: string; enabled: boolean; variable: string }>;
}

const BANDS = ['log_threshold', 'alert_threshold', 'challenge_threshold', 'block_threshold'] as const;

export function Settings() {
  const thresholds = useApi<Thresholds>('/api/v1/config/thresholds');
  const features = useApi<FeatureFlags>('/api/v1/config/features');
  return (
    <Page title="Settings" needs="admin" intro="Response-policy thresholds: a request whose threat score reaches a threshold gets that band's decision (log < alert < challenge < block).">
      <Async loaded={thresholds} what="the thresholds">
        {(data) => <ThresholdForm data={data} onSaved={thresholds.reload} />}
      </Async>
      <h2>Feature flags in force</h2>
      <p className="muted">Set for the whole deployment by environment variables when svc starts; read-only here.</p>
      <Async loaded={features} what="the feature flags">
        {(data) => (
          <table className="list" tabIndex={0}>
            <caption className="visually-hidden">Feature flags in force</caption>
            <thead><tr><th scope="col">Feature</th><th scope="col">State</th><th scope="col">Set by</th></tr></thead>
            <tbody>
              {data.data.map((feature) => (
                <tr key={feature.flag}><td>{feature.flag.replace(/_/g, ' ')}</td><td><Badge tone={feature.enabled ? 'ok' : undefined}>{feature.enabled ? 'on' : 'off'}</Badge></td><td><code>{feature.variable}</code></td></tr>
              ))}
            </tbody>
          </table>
        )}
      </Async>
    </Page>
  );
}

function ThresholdForm({ data, onSaved }: { data: Thresholds; onSaved: () => void }) {
  const allowed = useCan('admin');
  const [error, setError] = useState<ApiError | null>(null);
  const [saved, setSaved] = useState(false);
  const prefix = useId();
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setError(null);
    setSaved(false);
    try {
      await api.post('/api/v1/config/thresholds', Object.fromEntries(BANDS.map((band) => [band, Number(form.get(band))])));
      setSaved(true);
      onSaved();
    } catch (failure) {
      setError(failure instanceof ApiError ? failure : new ApiError(0, 'UNEXPECTED', String(failure), null));
    }
  };
  return (
    <form className="stacked-form" onSubmit={(event) => void submit(event)} aria-label="Thresholds">
      {BANDS.map((band) => (
        <div key={band}>
          <label htmlFor={`${prefix}-${band}`}>{band.replace('_threshold', '')}</label>
          <input id={`${prefix}-${band}`} name={band} type="number" min={0} max={1} step={0.01} defaultValue={data.thresholds[band]} readOnly={!allowed} required />
        </div>
      ))}
      <p className="muted small">Last changed {formatTime(data.updated_at)}.</p>
      <button type="submit" className="primary" disabled={!allowed}>Save thresholds</button>
      {saved ? <p role="status">Saved.</p> : null}
      {error ? <ErrorNotice error={error} /> : null}
    </form>
  );
}
