import { useId, useState, type FormEvent } from 'react';
import { api, ApiError } from '../api.ts';
import { ActionButton, Async, Badge, ErrorNotice, Page, formatTime, useApi, useCan } from '../ui.tsx';

interface ApiKey {
  key_id: string;
  display: string;
  name: string | null;
  scope: string;
  class: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export function ApiKeys() {
  const keys = useApi<{ data: ApiKey[] }>('/api/v1/keys');
  const canCreate = useCan('admin');
  const [created, setCreated] = useState<(ApiKey & { api_key: string }) | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const nameId = useId();

  const create = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setError(null);
    try {
      const name = String(form.get('name') ?? '').trim();
      const key = await api.post<ApiKey & { api_key: string }>('/api/v1/keys', { scope: form.get('scope'), class: form.get('class'), ...(name ? { name } : {}) });
      setCreated(key);
      keys.reload();
    } catch (failure) {
      setError(failure instanceof ApiError ? failure : new ApiError(0, 'UNEXPECTED', String(failure), null));
    }
  };

  return (
    <Page title="API keys" needs="admin" intro="Keys of this organization. A key's text is shown once, when it is created; svc keeps only its hash.">
      {created !== null ? (
        <div className="secret" role="status" aria-live="polite">
          <p><strong>Copy this key now: it will not be shown again.</strong></p>
          <code className="key-text" data-testid="new-key">{created.api_key}</code>
          <p>
            <button type="button" onClick={() => void navigator.clipboard?.writeText(created.api_key)}>Copy</button>{' '}
            <button type="button" onClick={() => setCreated(null)}>I have saved it</button>
          </p>
        </div>
      ) : null}
      <form className="inline-form" onSubmit={(event) => void create(event)} aria-label="Create a key">
        <label htmlFor={nameId}>Name</label>
        <input id={nameId} name="name" maxLength={200} placeholder="e.g. ci-pipeline" disabled={!canCreate} />
        <label>
          Scope
          <select name="scope" defaultValue="write" disabled={!canCreate}>
            <option>read</option>
            <option>write</option>
            <option>admin</option>
          </select>
        </label>
        <label>
          Class
          <select name="class" defaultValue="live" disabled={!canCreate}>
            <option>live</option>
            <option>test</option>
            <option>rstr</option>
          </select>
        </label>
        <button type="submit" className="primary" disabled={!canCreate}>Create key</button>
        {canCreate ? null : <span className="muted small">creating keys needs admin scope</span>}
      </form>
      {error ? <ErrorNotice error={error} /> : null}
      <Async loaded={keys} what="keys" isEmpty={(data) => data.data.length === 0} empty="No keys yet.">
        {(data) => (
          <table className="list" tabIndex={0}>
            <caption className="visually-hidden">API keys</caption>
            <thead>
              <tr><th scope="col">Key</th><th scope="col">Name</th><th scope="col">Scope</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">State</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr>
            </thead>
            <tbody>
              {data.data.map((key) => (
                <tr key={key.key_id}>
                  <td><code>{key.display}</code></td>
                  <td>{key.name ?? '—'}</td>
                  <td>{key.scope} <span className="muted">{key.class}</span></td>
                  <td>{formatTime(key.created_at)}</td>
                  <td>{formatTime(key.last_used_at)}</td>
                  <td>{key.revoked_at ? <Badge tone="block">revoked</Badge> : <Badge tone="ok">active</Badge>}</td>
                  <td>
                    {key.revoked_at ? null : (
                      <ActionButton needs="admin" kind="danger" confirm={`Revoke ${key.display}? Clients using it stop working at once.`} onAction={async () => {
                        await api.delete(`/api/v1/keys/${key.key_id}`);
                        keys.reload();
                      }}>
                        Revoke
                      </ActionButton>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Async>
    </Page>
  );
}
