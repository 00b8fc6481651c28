-- MCP upstream transports (issue #17): besides Streamable HTTP, the legacy HTTP+SSE transport
-- (`url` is the server's SSE endpoint) and stdio (`url` is `stdio:<name>`, a command from the
-- operator's MCP_STDIO_SERVERS allow-list; never a command supplied through the API).
ALTER TABLE mcp_servers ADD COLUMN transport text NOT NULL DEFAULT 'streamable_http'
  CHECK (transport IN ('streamable_http', 'sse', 'stdio'));
