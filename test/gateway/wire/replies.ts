// Minimal documented answers per wire protocol, so each SDK completes its call against the
// capture server (the request is what the differential suite compares).
import { encodeEvent } from '../../fakes/providers/protocols/bedrock.ts';
import type { Reply } from './capture-server.ts';

const sse = (events: Array<{ event?: string; data: unknown }>) =>
  events.map((item) => `${item.event === undefined ? '' : `event: ${item.event}\n`}data: ${typeof item.data === 'string' ? item.data : JSON.stringify(item.data)}\n\n`).join('');

const openAiJson = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Sunny.' }, finish_reason: 'stop', logprobs: null }],
  usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
};
const openAiStream = sse([
  { data: { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'Sunny.' }, finish_reason: null }] } },
  { data: { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] } },
  { data: { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } } },
  { data: '[DONE]' },
]);

const anthropicJson = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'm',
  content: [{ type: 'text', text: 'Sunny.' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 10, output_tokens: 2 },
};
const anthropicStream = sse([
  { event: 'message_start', data: { type: 'message_start', message: { ...anthropicJson, content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } } },
  { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
  { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Sunny.' } } },
  { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
  { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } } },
  { event: 'message_stop', data: { type: 'message_stop' } },
]);

const geminiJson = {
  candidates: [{ content: { role: 'model', parts: [{ text: 'Sunny.' }] }, finishReason: 'STOP', index: 0 }],
  usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 2, totalTokenCount: 12 },
  modelVersion: 'm',
};

const cohereJson = {
  id: 'c1',
  finish_reason: 'COMPLETE',
  message: { role: 'assistant', content: [{ type: 'text', text: 'Sunny.' }] },
  usage: { billed_units: { input_tokens: 10, output_tokens: 2 }, tokens: { input_tokens: 10, output_tokens: 2 } },
};
const cohereStream = sse([
  { event: 'message-start', data: { type: 'message-start', id: 'c1', delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } } } },
  { event: 'content-start', data: { type: 'content-start', index: 0, delta: { message: { content: { type: 'text', text: '' } } } } },
  { event: 'content-delta', data: { type: 'content-delta', index: 0, delta: { message: { content: { text: 'Sunny.' } } } } },
  { event: 'content-end', data: { type: 'content-end', index: 0 } },
  { event: 'message-end', data: { type: 'message-end', delta: { finish_reason: 'COMPLETE', usage: cohereJson.usage } } },
]);

const bedrockJson = {
  output: { message: { role: 'assistant', content: [{ text: 'Sunny.' }] } },
  stopReason: 'end_turn',
  usage: { inputTokens: 10, outputTokens: 2, totalTokens: 12 },
  metrics: { latencyMs: 10 },
};
const bedrockStream = Buffer.concat(
  [
    encodeEvent('messageStart', { role: 'assistant' }),
    encodeEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Sunny.' } }),
    encodeEvent('contentBlockStop', { contentBlockIndex: 0 }),
    encodeEvent('messageStop', { stopReason: 'end_turn' }),
    encodeEvent('metadata', { usage: { inputTokens: 10, outputTokens: 2, totalTokens: 12 }, metrics: { latencyMs: 10 } }),
  ].map((bytes) => Buffer.from(bytes)),
);

const json = (body: unknown): Reply => ({ contentType: 'application/json', body: JSON.stringify(body) });
const events = (body: string): Reply => ({ contentType: 'text/event-stream', body });

export type Protocol = 'openai' | 'anthropic' | 'google' | 'cohere' | 'bedrock';

export const REPLIES: Record<Protocol, { json: Reply; stream: Reply }> = {
  openai: { json: json(openAiJson), stream: events(openAiStream) },
  anthropic: { json: json(anthropicJson), stream: events(anthropicStream) },
  google: { json: json(geminiJson), stream: events(sse([{ data: geminiJson }])) },
  cohere: { json: json(cohereJson), stream: events(cohereStream) },
  bedrock: { json: json(bedrockJson), stream: { contentType: 'application/vnd.amazon.eventstream', body: bedrockStream } },
};
