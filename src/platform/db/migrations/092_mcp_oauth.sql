-- An org's OAuth 2.0 authorization server for its MCP endpoints (RFC 9728 metadata, access
-- tokens accepted beside svc keys): one per org.
CREATE TABLE mcp_oauth (
  org_id uuid PRIMARY KEY REFERENCES orgs(id) ON DELETE CASCADE,
  issuer text NOT NULL,
  jwks_uri text NOT NULL,
  -- The audience a token must carry; null: the MCP endpoint's own URL (RFC 8707 resource).
  audience text,
  -- The MCP role a token's holder gets (tool authorization by role).
  role text NOT NULL DEFAULT 'viewer' CHECK (role IN ('viewer', 'operator', 'admin')),
  scopes_supported jsonb NOT NULL DEFAULT '[]'::jsonb,
  updated_at timestamptz NOT NULL DEFAULT now()
);
SELECT svc_enable_rls('mcp_oauth');
