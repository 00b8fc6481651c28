-- MCP security pillar (issue #17): registered upstream servers, pinned tool definitions,
-- quarantined results, and the session columns the proxy keeps. All org-scoped under RLS.

CREATE TABLE mcp_servers (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  name text NOT NULL,
  url text NOT NULL,
  -- Tool name -> category (read_files, write_files, execute_code, network_access, system_calls, none).
  tool_categories jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- What a held (changed or poisoned) definition does: 'hide' removes it from tools/list, 'block'
  -- lists it but refuses its calls. Calls of a held tool are refused either way.
  on_held text NOT NULL DEFAULT 'hide' CHECK (on_held IN ('hide', 'block')),
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, name)
);
SELECT svc_enable_rls('mcp_servers');

-- Trust on first use: one row per (server, kind, name). `hash` is the approved definition's
-- SHA-256 over its JCS form (null while a first-sight definition is held as poisoned);
-- `pending_hash` a definition seen since and held until an admin approves it.
CREATE TABLE mcp_definitions (
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  server_id uuid NOT NULL REFERENCES mcp_servers(id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('tool', 'prompt', 'resource', 'instructions')),
  name text NOT NULL,
  hash text,
  pending_hash text,
  pending_definition jsonb,
  pending_reason text,
  findings jsonb NOT NULL DEFAULT '[]'::jsonb,
  category text,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (server_id, kind, name)
);
CREATE INDEX mcp_definitions_org_name ON mcp_definitions (org_id, kind, name);
SELECT svc_enable_rls('mcp_definitions');

CREATE TABLE mcp_quarantine (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  server_id uuid NOT NULL REFERENCES mcp_servers(id) ON DELETE CASCADE,
  session_id text,
  method text NOT NULL,
  tool text,
  original jsonb NOT NULL,
  findings jsonb NOT NULL DEFAULT '[]'::jsonb,
  state text NOT NULL DEFAULT 'held' CHECK (state IN ('held', 'released')),
  created_at timestamptz NOT NULL DEFAULT now(),
  released_at timestamptz,
  released_by text
);
CREATE INDEX mcp_quarantine_org ON mcp_quarantine (org_id, created_at DESC);
SELECT svc_enable_rls('mcp_quarantine');

ALTER TABLE mcp_sessions ADD COLUMN server_id uuid;
ALTER TABLE mcp_sessions ADD COLUMN mcp_session_id text;
ALTER TABLE mcp_sessions ADD COLUMN state text NOT NULL DEFAULT 'active';
