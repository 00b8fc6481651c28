/**
 * JSON-RPC 2.0 as MCP uses it: message shapes, validation, the error codes svc answers with
 * itself, and its refusals of tool calls (isError tool results with a stable
 * `_meta["svc/refusal"].code`, docs/mcp.md); they are separate from the REST API's error catalogue.
 */

export type JsonRpcId = string | number;

export interface JsonRpcMessage {
  jsonrpc: '2.0';
  id?: JsonRpcId | null;
  method?: string;
  params?: Record<string, unknown> | unknown[];
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

/** svc's refusals of a tool call, by stable code (`_meta["svc/refusal"].code`). */
export const MCP_REFUSALS = {
  MCP_TOOL_FORBIDDEN: { message: "The caller's role may not use a tool of this category." },
  MCP_TOOL_HELD: { message: 'This tool definition changed or was flagged and is held until an administrator approves it.' },
  MCP_ARGUMENTS_BLOCKED: { message: 'The tool arguments were blocked by the response policy.' },
} as const;
export type McpRefusal = keyof typeof MCP_REFUSALS;

/**
 * svc's answer to a tool call it refuses to forward: a tool result with isError (what an MCP
 * client expects of a call the server will not carry out: MCP servers built on the SDK answer an
 * unknown or failing tool so, and a model reads it and carries on), its text saying why, and
 * `_meta["svc/refusal"]` with the stable code and details for programs.
 */
export function refusal(id: JsonRpcId, code: McpRefusal, data: Record<string, unknown> = {}): JsonRpcMessage {
  const tool = typeof data.tool === 'string' ? ` (tool "${data.tool}")` : '';
  return { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: `[svc] ${MCP_REFUSALS[code].message.replace(/\.$/, '')}${tool}.` }], isError: true, _meta: { 'svc/refusal': { code, ...data } } } };
}

export function rpcError(id: JsonRpcId | null, code: number, message: string): JsonRpcMessage {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

export function isRequest(message: JsonRpcMessage): boolean {
  return typeof message.method === 'string' && message.id !== undefined && message.id !== null;
}

export function isResponse(message: JsonRpcMessage): boolean {
  return message.method === undefined && message.id !== undefined && (message.result !== undefined || message.error !== undefined);
}

/** A message svc will forward: an object with jsonrpc "2.0" that is a request (id not null), notification or response. */
export function validMessage(value: unknown): value is JsonRpcMessage {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const message = value as Record<string, unknown>;
  if (message.jsonrpc !== '2.0') return false;
  const id = message.id;
  if (id !== undefined && id !== null && typeof id !== 'string' && !exactNumber(id)) return false;
  if (typeof message.method === 'string') {
    // MCP: a request's id must not be null (it would read as neither a request nor a notification).
    if (id === null) return false;
    return message.params === undefined || (message.params !== null && typeof message.params === 'object');
  }
  if (message.method !== undefined) return false;
  return id !== undefined && ('result' in message || (message.error !== null && typeof message.error === 'object'));
}

export function idKey(id: JsonRpcId | null | undefined): string {
  return typeof id === 'string' ? `s:${id}` : `n:${String(id)}`;
}

/**
 * A numeric id svc can answer under: finite and within the integers a double holds exactly (an id
 * of 9007199254740993 reads as ...992 and 1e400 as Infinity, which would be sent on as null).
 */
function exactNumber(id: unknown): id is number {
  return typeof id === 'number' && Number.isFinite(id) && Math.abs(id) <= Number.MAX_SAFE_INTEGER;
}

/** The id of a message, valid or not, when it can be read (a string or an exact number); else undefined. */
export function usableId(value: unknown): JsonRpcId | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const id = (value as Record<string, unknown>).id;
  return typeof id === 'string' || exactNumber(id) ? id : undefined;
}
