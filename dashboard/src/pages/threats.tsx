import { useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import type { ThreatEvent as ThreatEventFields } from '../../../src/compliance/threat-event.ts';
import { Async, Badge, Page, formatTime, useApi } from '../ui.tsx';

/** GET /api/v1/threats/{id} adds the explanation to the list's fields (the server's one definition). */
export interface ThreatEvent extends ThreatEventFields {
  explanation?: string;
}

const FILTERS = ['decision', 'category', 'pattern', 'session_id', 'request_id', 'gateway_id'] as const;

export function Threats() {
  const [params, setParams] = useSearchParams();
  const [cursor, setCursor] = useState<string | null>(null);
  const selected = params.get('id');
  const query = new URLSearchParams();
  for (const name of FILTERS) {
    const value = params.get(name);
    if (value) query.set(name, value);
  }
  query.set('limit', '50');
  if (cursor !== null) query.set('cursor', cursor);
  const list = useApi<{ data: ThreatEvent[]; next_cursor: string | null }>(`/api/v1/threats?${query.toString()}`);

  const apply = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const next = new URLSearchParams();
    for (const name of FILTERS) {
      const value = String(form.get(name) ?? '').trim();
      if (value) next.set(name, value);
    }
    const current = new URLSearchParams();
    for (const name of FILTERS) {
      const value = params.get(name);
      if (value) current.set(name, value);
    }
    // The same search again is a refresh.
    if (next.toString() === current.toString() && cursor === null) list.reload();
    setCursor(null);
    setParams(next);
  };

  const select = (id: string | null) => {
    const next = new URLSearchParams(params);
    if (id === null) next.delete('id');
    else next.set('id', id);
    setParams(next);
  };

  return (
    <Page title="Threats" intro="Every request scored log or above, newest first. Choose one to read its explanation.">
      <form className="filters" onSubmit={apply} aria-label="Filter threats" key={params.toString()}>
        <label>
          Decision
          <select name="decision" defaultValue={params.get('decision') ?? ''}>
            <option value="">any</option>
            <option>log</option>
            <option>alert</option>
            <option>challenge</option>
            <option>block</option>
          </select>
        </label>
        <label>
          Category <input name="category" defaultValue={params.get('category') ?? ''} placeholder="e.g. prompt-injection" />
        </label>
        <label>
          Pattern id <input name="pattern" defaultValue={params.get('pattern') ?? ''} />
        </label>
        <label>
          Session <input name="session_id" defaultValue={params.get('session_id') ?? ''} />
        </label>
        <label>
          Request id <input name="request_id" defaultValue={params.get('request_id') ?? ''} />
        </label>
        <label>
          Gateway <input name="gateway_id" defaultValue={params.get('gateway_id') ?? ''} />
        </label>
        <button type="submit" className="primary">Search</button>
      </form>
      <div className="split">
        <div>
          <Async loaded={list} what="threats" isEmpty={(data) => data.data.length === 0} empty="No threats match. Clear the filters or widen the search.">
            {(data) => (
              <>
                <table className="list" tabIndex={0}>
                  <caption className="visually-hidden">Threat events</caption>
                  <thead>
                    <tr><th scope="col">When</th><th scope="col">Decision</th><th scope="col">Score</th><th scope="col">Pillar</th><th scope="col">Top pattern</th></tr>
                  </thead>
                  <tbody>
                    {data.data.map((event) => (
                      <tr key={event.id} className={selected === event.id ? 'selected' : ''}>
                        <td>
                          <button type="button" className="link" onClick={() => select(event.id)} aria-label={`Explain the ${event.decision} of ${formatTime(event.occurred_at)}`}>
                            {formatTime(event.occurred_at)}
                          </button>
                        </td>
                        <td><Badge tone={event.decision}>{event.decision}</Badge></td>
                        <td>{event.threat_score.toFixed(2)}</td>
                        <td>{event.pillar}</td>
                        <td>{event.patterns_matched[0]?.name ?? event.categories[0] ?? '—'}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
                <div className="pager">
                  {cursor !== null ? <button type="button" onClick={() => setCursor(null)}>Newest</button> : null}
                  {data.next_cursor !== null ? <button type="button" onClick={() => setCursor(data.next_cursor)}>Older</button> : null}
                </div>
              </>
            )}
          </Async>
        </div>
        {selected !== null ? <ThreatDetail id={selected} onClose={() => select(null)} /> : null}
      </div>
    </Page>
  );
}

function ThreatDetail({ id, onClose }: { id: string; onClose: () => void }) {
  const event = useApi<ThreatEvent>(`/api/v1/threats/${encodeURIComponent(id)}`);
  return (
    <aside className="detail" aria-labelledby="threat-detail-title">
      <div className="detail-head">
        <h2 id="threat-detail-title">Explanation</h2>
        <button type="button" onClick={onClose}>Close</button>
      </div>
      <Async loaded={event} what="the explanation">
        {(data) => (
          <>
            <p className="explanation">{data.explanation}</p>
            <dl className="facts">
              <dt>Decision</dt><dd><Badge tone={data.decision}>{data.decision}</Badge> at score {data.threat_score.toFixed(2)}{data.base_score !== null ? ` (base ${data.base_score.toFixed(2)})` : ''}</dd>
              <dt>Request</dt><dd><code>{data.request_id}</code></dd>
              <dt>Hop</dt><dd>{data.pillar} pillar, {data.kind}{data.gateway_id ? <> through <code>{data.gateway_id}</code></> : null}</dd>
              <dt>Session</dt><dd>{data.session_id ? <><code>{data.session_id}</code>{data.session_request_count !== null ? `, request ${data.session_request_count}` : ''}{data.session_escalation_factor !== null ? `, escalation ×${data.session_escalation_factor}` : ''}</> : 'none'}</dd>
              <dt>Categories</dt><dd>{data.categories.length > 0 ? data.categories.join(', ') : '—'}</dd>
              <dt>When</dt><dd>{formatTime(data.occurred_at)}</dd>
            </dl>
            <h3>Patterns</h3>
            {data.patterns_matched.length === 0 ? <p className="muted">No catalogue pattern matched.</p> : (
              <ul className="patterns">
                {data.patterns_matched.map((pattern) => (
                  <li key={pattern.id}><code>{pattern.id}</code> {pattern.name} <span className="muted">confidence {pattern.confidence.toFixed(2)}</span></li>
                ))}
              </ul>
            )}
          </>
        )}
      </Async>
    </aside>
  );
}
