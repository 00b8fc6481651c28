/**
 * The bridge in front of message-channel upstreams (src/mcp/bridge.ts), against a channel the test
 * drives: what a Streamable HTTP client reads when the server behind it never answers or goes away.
 */
import { describe, expect, it } from 'vitest';
import { createBridge, type ChannelHandlers } from '../../src/mcp/bridge.ts';
import type { JsonRpcMessage } from '../../src/mcp/jsonrpc.ts';

const INITIALIZE = JSON.stringify({ jsonrpc: '2.0', id: 'init-1', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } });
const headers = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };

/** A channel that receives everything and answers nothing (a server hung at start), with its handlers for the test. */
function muteChannel() {
  const state: { handlers: ChannelHandlers | null; sent: JsonRpcMessage[]; closed: boolean } = { handlers: null, sent: [], closed: false };
  const open = async (handlers: ChannelHandlers) => {
    state.handlers = handlers;
    return {
      send: (message: JsonRpcMessage) => void state.sent.push(message),
      close: async () => {
        state.closed = true;
      },
    };
  };
  return { state, open };
}

async function events(body: NodeJS.ReadableStream): Promise<unknown[]> {
  let text = '';
  for await (const chunk of body) text += String(chunk);
  return text.split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)) as unknown);
}

/** A bridge over a mute channel with one initialized session: its headers for the next POSTs. */
async function openSession() {
  const { state, open } = muteChannel();
  const bridge = createBridge({ open, initializeTimeoutMs: 60_000 });
  const opened = await bridge.request({ method: 'POST', headers, body: INITIALIZE });
  state.handlers!.onmessage({ jsonrpc: '2.0', id: 'init-1', result: { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'mute', version: '1' } } });
  await events(opened.body);
  return { state, bridge, session: { ...headers, 'mcp-session-id': opened.headers['mcp-session-id']! } };
}

describe('bridge failures', () => {
  it('answers an initialize the server never answers with a JSON-RPC error under its id, and closes the channel', async () => {
    const { state, open } = muteChannel();
    const bridge = createBridge({ open, initializeTimeoutMs: 100 });
    const answer = await bridge.request({ method: 'POST', headers, body: INITIALIZE });
    expect(answer.statusCode).toBe(200);
    expect(await events(answer.body)).toEqual([{ jsonrpc: '2.0', id: 'init-1', error: expect.objectContaining({ code: -32000 }) }]);
    expect(state.closed).toBe(true);
    expect(bridge.size()).toBe(0);
  });

  it('answers every request still waiting with an error under its id when the channel closes, then ends the stream', async () => {
    const { state, bridge, session: sessionHeaders } = await openSession();
    const session = sessionHeaders['mcp-session-id'];
    const batch = await bridge.request({ method: 'POST', headers: { ...headers, 'mcp-session-id': session }, body: JSON.stringify([{ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'slow' } }, { jsonrpc: '2.0', id: 6, method: 'ping' }]) });
    state.handlers!.onmessage({ jsonrpc: '2.0', id: 6, result: {} });
    state.handlers!.onclose();
    expect(await events(batch.body)).toEqual([{ jsonrpc: '2.0', id: 6, result: {} }, { jsonrpc: '2.0', id: 5, error: expect.objectContaining({ code: -32000 }) }]);
    const after = await bridge.request({ method: 'POST', headers: { ...headers, 'mcp-session-id': session }, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' }) });
    expect(after.statusCode).toBe(404);
    expect(JSON.parse(String((await after.body.toArray()).join('')))).toMatchObject({ id: 7, error: { code: -32001 } });
  });

  it('refuses a request under an id that is still waiting for its answer, and still answers the first', async () => {
    const { state, bridge, session } = await openSession();
    const call = await bridge.request({ method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow' } }) });
    const reused = await bridge.request({ method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'prompts/list' }) });
    expect(reused.statusCode).toBe(400);
    expect(JSON.parse(String((await reused.body.toArray()).join('')))).toMatchObject({ id: 1, error: { code: -32600 } });
    expect(state.sent.filter((message) => message.method === 'prompts/list')).toEqual([]);
    state.handlers!.onmessage({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'done' }] } });
    expect(await events(call.body)).toEqual([{ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'done' }] } }]);
  });
});
