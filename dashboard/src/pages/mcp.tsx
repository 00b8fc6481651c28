import { useState } from 'react';
import { api } from '../api.ts';
import { ActionButton, Async, Badge, Page, formatTime, useApi } from '../ui.tsx';

interface McpServer {
  id: string;
  name: string;
  url: string;
  transport: string;
  on_held: string;
  created_at: string;
  endpoint: string;
}

interface McpDefinition {
  server_id: string;
  kind: 'tool' | 'prompt' | 'resource' | 'instructions';
  name: string;
  hash: string | null;
  pending_hash: string | null;
  pending_definition: unknown;
  pending_reason: string | null;
  findings: Array<{ id: string; name: string; category: string; confidence: number }>;
  category: string | null;
  updated_at: string;
}

interface QuarantineEntry {
  id: string;
  server_id: string;
  method: string;
  tool: string | null;
  state: string;
  created_at: string;
  findings: Array<{ name: string }>;
}

export function Mcp() {
  const servers = useApi<{ servers: McpServer[] }>('/api/v1/mcp/servers');
  const quarantine = useApi<{ quarantine: QuarantineEntry[] }>('/api/v1/mcp/quarantine?state=held');
  const [selected, setSelected] = useState<string | null>(null);
  return (
    <Page title="MCP" needs="admin" intro="MCP servers behind the inspecting proxy. Tool definitions are pinned by hash: a changed or poisoned definition is held until an admin approves it.">
      <h2>Servers</h2>
      <Async loaded={servers} what="MCP servers" isEmpty={(data) => data.servers.length === 0} empty="No MCP servers. Register one with POST /api/v1/mcp/servers (docs/mcp.md).">
        {(data) => (
          <ul className="cards-list">
            {data.servers.map((server) => (
              <li key={server.id} className="item">
                <div className="item-head">
                  <strong>{server.name}</strong> <Badge>{server.transport}</Badge>
                </div>
                <p className="small">Upstream <code className="url">{server.url}</code> · clients connect to <code>{server.endpoint}</code> · held tools: {server.on_held}</p>
                <button type="button" aria-expanded={selected === server.id} onClick={() => setSelected(selected === server.id ? null : server.id)}>
                  {selected === server.id ? 'Hide definitions' : 'Pins and held definitions'}
                </button>
                {selected === server.id ? <Definitions server={server} /> : null}
              </li>
            ))}
          </ul>
        )}
      </Async>
      <h2>Quarantine</h2>
      <Async loaded={quarantine} what="quarantined results" isEmpty={(data) => data.quarantine.length === 0} empty="No tool results are held in quarantine.">
        {(data) => (
          <table className="list" tabIndex={0}>
            <caption className="visually-hidden">Quarantined tool results</caption>
            <thead><tr><th scope="col">When</th><th scope="col">Tool</th><th scope="col">Findings</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
            <tbody>
              {data.quarantine.map((entry) => (
                <tr key={entry.id}>
                  <td>{formatTime(entry.created_at)}</td>
                  <td>{entry.tool ?? entry.method}</td>
                  <td>{entry.findings.map((finding) => finding.name).join(', ')}</td>
                  <td>
                    <ActionButton needs="admin" onAction={async () => {
                      await api.post(`/api/v1/mcp/quarantine/${entry.id}/release`);
                      quarantine.reload();
                    }}>
                      Release
                    </ActionButton>
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

function Definitions({ server }: { server: McpServer }) {
  const definitions = useApi<{ definitions: McpDefinition[] }>(`/api/v1/mcp/servers/${server.id}/definitions`);
  return (
    <Async loaded={definitions} what="definitions" isEmpty={(data) => data.definitions.length === 0} empty="No definitions pinned yet: they are pinned when a client first lists them through the proxy.">
      {(data) => {
        const held = data.definitions.filter((definition) => definition.pending_hash !== null);
        const pinned = data.definitions.filter((definition) => definition.pending_hash === null);
        return (
          <div className="definitions">
            <h3>Held for approval ({held.length})</h3>
            {held.length === 0 ? <p className="muted">Nothing waits for approval.</p> : held.map((definition) => (
              <article key={`${definition.kind}:${definition.name}`} className="held" aria-label={`Held ${definition.kind} ${definition.name}`}>
                <p>
                  <strong>{definition.kind} {definition.name}</strong> <Badge tone="block">{definition.pending_reason ?? 'held'}</Badge>
                </p>
                {definition.findings.length > 0 ? <p className="small">Findings: {definition.findings.map((finding) => `${finding.name} (${finding.confidence.toFixed(2)})`).join('; ')}</p> : null}
                <div className="diff" role="group" aria-label="Change">
                  <p className="diff-removed">− pinned hash {definition.hash === null ? '(none: first seen)' : <code>{definition.hash.slice(0, 16)}…</code>}</p>
                  <p className="diff-added">+ pending hash <code>{definition.pending_hash?.slice(0, 16)}…</code></p>
                  <pre className="diff-added">{JSON.stringify(definition.pending_definition, null, 2)}</pre>
                </div>
                <ActionButton needs="admin" kind="primary" confirm={`Approve this ${definition.kind} definition? Clients will be able to use it.`} onAction={async () => {
                  await api.post(`/api/v1/mcp/servers/${server.id}/definitions/approve`, { kind: definition.kind, name: definition.name, hash: definition.pending_hash });
                  definitions.reload();
                }}>
                  Approve {definition.name}
                </ActionButton>
              </article>
            ))}
            <h3>Pinned ({pinned.length})</h3>
            <table className="list" tabIndex={0}>
              <caption className="visually-hidden">Pinned definitions</caption>
              <thead><tr><th scope="col">Kind</th><th scope="col">Name</th><th scope="col">Category</th><th scope="col">Hash</th><th scope="col">Updated</th></tr></thead>
              <tbody>
                {pinned.map((definition) => (
                  <tr key={`${definition.kind}:${definition.name}`}>
                    <td>{definition.kind}</td>
                    <td>{definition.name}</td>
                    <td>{definition.category ?? '—'}</td>
                    <td><code>{definition.hash?.slice(0, 12) ?? '—'}</code></td>
                    <td>{formatTime(definition.updated_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        );
      }}
    </Async>
  );
}
