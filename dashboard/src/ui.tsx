/**
 * Shared pieces of every page: the signed-in identity, a data-loading hook, the loading / empty /
 * error states, buttons that respect the caller's scope, and charts (Chart.js).
 */
import { createContext, useCallback, useContext, useEffect, useId, useRef, useState, type ReactNode } from 'react';
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
  type ChartConfiguration,
} from 'chart.js';
import { api, ApiError, scopeAllows, type Identity } from './api.ts';

Chart.register(LineController, LineElement, PointElement, BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

export const IdentityContext = createContext<Identity | null>(null);

export function useIdentity(): Identity {
  const identity = useContext(IdentityContext);
  if (identity === null) throw new Error('useIdentity outside a signed-in page');
  return identity;
}

export function useCan(scope: 'read' | 'write' | 'admin'): boolean {
  return scopeAllows(useIdentity().scope, scope);
}

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | null;
  loading: boolean;
  reload: () => void;
}

/** GETs a path (null: nothing to load yet) and reloads it when the path changes or on request. */
export function useApi<T>(path: string | null): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: ApiError | null; loading: boolean }>({ data: undefined, error: null, loading: path !== null });
  const [round, setRound] = useState(0);
  useEffect(() => {
    if (path === null) {
      setState({ data: undefined, error: null, loading: false });
      return undefined;
    }
    const controller = new AbortController();
    setState((previous) => ({ ...previous, loading: true, error: null }));
    api.get<T>(path, controller.signal).then(
      (data) => setState({ data, error: null, loading: false }),
      (error: unknown) => {
        if ((error as Error).name === 'AbortError') return;
        setState({ data: undefined, error: error instanceof ApiError ? error : new ApiError(0, 'UNEXPECTED', String(error), null), loading: false });
      },
    );
    return () => controller.abort();
  }, [path, round]);
  const reload = useCallback(() => setRound((value) => value + 1), []);
  return { ...state, reload };
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="state loading" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="state empty">{children}</p>;
}

export function ErrorNotice({ error, retry }: { error: ApiError; retry?: () => void }) {
  return (
    <div className="state error" role="alert">
      <p>
        <strong>{error.code}</strong>: {error.message}
        {error.requestId ? <span className="muted"> (request {error.requestId})</span> : null}
      </p>
      {error.code === 'SCOPE_INSUFFICIENT' ? <p>Your role cannot read this page; an admin can.</p> : null}
      {retry ? (
        <button type="button" onClick={retry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

/** Renders a load's three states, then `children` with the data (empty when `isEmpty` says so). */
export function Async<T>({ loaded, what, isEmpty, empty, children }: { loaded: Loaded<T>; what: string; isEmpty?: (data: T) => boolean; empty?: ReactNode; children: (data: T) => ReactNode }) {
  if (loaded.error) return <ErrorNotice error={loaded.error} retry={loaded.reload} />;
  if (loaded.data === undefined) return <Loading what={what} />;
  if (isEmpty?.(loaded.data)) return <Empty>{empty ?? `No ${what} yet.`}</Empty>;
  return <>{children(loaded.data)}</>;
}

/** A page: title, a note when the caller may only read, and its body. */
export function Page({ title, needs, children, intro }: { title: string; needs?: 'write' | 'admin'; intro?: ReactNode; children: ReactNode }) {
  const identity = useIdentity();
  const readOnly = needs !== undefined && !scopeAllows(identity.scope, needs);
  useEffect(() => {
    document.title = `${title} · svc`;
  }, [title]);
  return (
    <section className="page" aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        {title}
      </h1>
      {intro ? <p className="intro">{intro}</p> : null}
      {readOnly ? (
        <p className="read-only" role="note">
          You are signed in with {identity.role ? `the ${identity.role} role` : `a ${identity.scope}-scope credential`}: you can see this page but not change it (changes need {needs} scope).
        </p>
      ) : null}
      {children}
    </section>
  );
}

/**
 * A button for an action that needs a scope: disabled, with the reason, when the caller lacks
 * it; while the action runs it is busy; a failure is shown beside it.
 */
export function ActionButton({ needs, onAction, children, kind, confirm }: { needs: 'write' | 'admin'; onAction: () => Promise<unknown>; children: ReactNode; kind?: 'danger' | 'primary'; confirm?: string }) {
  const allowed = useCan(needs);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const reason = useId();
  const run = async () => {
    if (confirm !== undefined && !window.confirm(confirm)) return;
    setBusy(true);
    setError(null);
    try {
      await onAction();
    } catch (failure) {
      setError(failure instanceof ApiError ? failure : new ApiError(0, 'UNEXPECTED', String(failure), null));
    } finally {
      setBusy(false);
    }
  };
  return (
    <span className="action">
      <button type="button" className={kind} disabled={!allowed || busy} aria-describedby={allowed ? undefined : reason} onClick={() => void run()}>
        {busy ? 'Working…' : children}
      </button>
      {allowed ? null : (
        <span id={reason} className="muted small">
          needs {needs} scope
        </span>
      )}
      {error ? <ErrorNotice error={error} /> : null}
    </span>
  );
}

export function formatTime(value: string | null | undefined): string {
  if (value === null || value === undefined) return '—';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toLocaleString();
}

export function Badge({ children, tone }: { children: ReactNode; tone?: string }) {
  return <span className={`badge ${tone ?? ''}`}>{children}</span>;
}

export const DECISION_COLORS: Record<string, string> = { log: '#52606d', alert: '#b7791f', challenge: '#6b46c1', block: '#c53030' };
const PALETTE = ['#2b6cb0', '#c53030', '#2f855a', '#b7791f', '#6b46c1', '#d53f8c', '#00838f', '#52606d'];

export function colorAt(index: number): string {
  return PALETTE[index % PALETTE.length] ?? '#2b6cb0';
}

/**
 * A chart (Chart.js on a canvas) with a text alternative: the canvas is an image whose label
 * summarizes the figures, so screen readers and tests read the same numbers.
 */
export function ChartView({ type, labels, datasets, label, stacked, fractional }: { type: 'line' | 'bar'; labels: string[]; datasets: Array<{ label: string; data: number[]; color?: string }>; label: string; stacked?: boolean; fractional?: boolean }) {
  const canvas = useRef<HTMLCanvasElement | null>(null);
  useEffect(() => {
    if (canvas.current === null) return undefined;
    const config: ChartConfiguration<'line' | 'bar', number[], string> = {
      type,
      data: {
        labels,
        datasets: datasets.map((dataset, index) => ({
          label: dataset.label,
          data: dataset.data,
          borderColor: dataset.color ?? colorAt(index),
          backgroundColor: dataset.color ?? colorAt(index),
          tension: 0.2,
          pointRadius: 2,
        })),
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        scales: { x: { stacked: stacked ?? false }, y: { stacked: stacked ?? false, beginAtZero: true, ticks: fractional ? {} : { precision: 0 } } },
        plugins: { legend: { position: 'bottom' } },
      },
    };
    const chart = new Chart(canvas.current, config);
    return () => chart.destroy();
  }, [type, labels, datasets, stacked, fractional]);
  const summary = datasets.map((dataset) => `${dataset.label}: ${Math.round(dataset.data.reduce((sum, value) => sum + value, 0) * 1e6) / 1e6}`).join(', ');
  return (
    <figure className="chart">
      <div className="chart-box">
        <canvas ref={canvas} role="img" aria-label={`${label}. Totals: ${summary}`} />
      </div>
      <figcaption>{label}</figcaption>
    </figure>
  );
}

/** A JSON document editor for configuration objects (shown read-only without the scope). */
export function JsonEditor({ value, needs, onSave, label }: { value: unknown; needs: 'admin' | 'write'; onSave: (value: unknown) => Promise<unknown>; label: string }) {
  const allowed = useCan(needs);
  const [text, setText] = useState(() => JSON.stringify(value, null, 2));
  const [invalid, setInvalid] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const id = useId();
  useEffect(() => setText(JSON.stringify(value, null, 2)), [value]);
  return (
    <div className="json-editor">
      <label htmlFor={id}>{label}</label>
      <textarea id={id} value={text} readOnly={!allowed} rows={Math.min(24, text.split('\n').length + 1)} onChange={(event) => {
        setText(event.target.value);
        setSaved(false);
      }} spellCheck={false} />
      {invalid ? <p className="state error" role="alert">{invalid}</p> : null}
      {saved ? <p role="status">Saved.</p> : null}
      <ActionButton needs={needs} kind="primary" onAction={async () => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch (error) {
          setInvalid(`Not valid JSON: ${(error as Error).message}`);
          return;
        }
        setInvalid(null);
        await onSave(parsed);
        setSaved(true);
      }}>
        Save
      </ActionButton>
    </div>
  );
}

/** Every bucket start (UTC hour or day) from `from` up to `to`, so quiet hours show as zero. */
export function bucketStarts(from: string, to: string, bucket: 'hour' | 'day'): string[] {
  const step = bucket === 'hour' ? 3_600_000 : 86_400_000;
  const starts: string[] = [];
  for (let time = Math.floor(Date.parse(from) / step) * step; time < Date.parse(to); time += step) starts.push(new Date(time).toISOString());
  return starts;
}

/** A bucket's start as a chart label: the time of an hour, the date of a day. */
export function bucketLabel(start: string, bucket: 'hour' | 'day'): string {
  const date = new Date(start);
  return bucket === 'hour' ? date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : date.toLocaleDateString([], { month: 'short', day: 'numeric' });
}
