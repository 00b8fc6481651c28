import { useState } from 'react';
import { api, ApiError } from '../api.ts';
import { ActionButton, Async, Badge, ErrorNotice, Page, formatTime, useApi } from '../ui.tsx';

interface AuditRecord {
  seq: number;
  occurred_at: string;
  actor: string;
  action: string;
  target: string | null;
  outcome: string;
  hash: string;
}

interface Verification {
  ok: boolean;
  checked: number;
  first_bad: { seq: number; reason: string } | null;
  level: string;
}

export function Audit() {
  const [before, setBefore] = useState<number | null>(null);
  const page = useApi<{ records: AuditRecord[]; next_before: number | null }>(`/api/v1/audit?limit=50${before === null ? '' : `&before=${before}`}`);
  const [verification, setVerification] = useState<Verification | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  return (
    <Page title="Audit" intro="The organization's tamper-evident audit chain: every change, newest first. Verification recomputes the hash chain.">
      <div className="toolbar">
        <ActionButton needs="admin" kind="primary" onAction={async () => {
          setError(null);
          try {
            setVerification(await api.get<Verification>('/api/v1/audit/verify'));
          } catch (failure) {
            setError(failure instanceof ApiError ? failure : new ApiError(0, 'UNEXPECTED', String(failure), null));
          }
        }}>
          Verify the chain
        </ActionButton>
        {verification ? (
          <p role="status" className={verification.ok ? 'state ok' : 'state error'}>
            {verification.ok ? `Chain intact: ${verification.checked} entries checked.` : `Chain broken at entry ${verification.first_bad?.seq ?? '?'} (${verification.first_bad?.reason ?? 'unknown'}); ${verification.checked} checked.`}
          </p>
        ) : null}
        {error ? <ErrorNotice error={error} /> : null}
      </div>
      <Async loaded={page} what="audit entries" isEmpty={(data) => data.records.length === 0} empty="No audit entries yet.">
        {(data) => (
          <>
            <table className="list" tabIndex={0}>
              <caption className="visually-hidden">Audit entries</caption>
              <thead><tr><th scope="col">#</th><th scope="col">When</th><th scope="col">Actor</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Outcome</th></tr></thead>
              <tbody>
                {data.records.map((record) => (
                  <tr key={record.seq}>
                    <td>{record.seq}</td>
                    <td>{formatTime(record.occurred_at)}</td>
                    <td className="wrap">{record.actor}</td>
                    <td>{record.action}</td>
                    <td className="wrap">{record.target ?? '—'}</td>
                    <td><Badge tone={record.outcome === 'success' ? 'ok' : 'alert'}>{record.outcome}</Badge></td>
                  </tr>
                ))}
              </tbody>
            </table>
            <div className="pager">
              {before !== null ? <button type="button" onClick={() => setBefore(null)}>Newest</button> : null}
              {data.next_before !== null ? <button type="button" onClick={() => setBefore(data.next_before)}>Older</button> : null}
            </div>
          </>
        )}
      </Async>
    </Page>
  );
}
