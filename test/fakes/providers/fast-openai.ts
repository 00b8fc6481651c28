/**
 * A minimal-work OpenAI-compatible upstream for benchmarks: responses are pre-serialized, the
 * request body is drained but not parsed (a substring check decides stream or not), nothing is
 * recorded but a counter. Speaks the same wire format as the full OpenAI fake
 * (/v1/chat/completions, chat.completion JSON, chat.completion.chunk SSE + usage chunk + [DONE]).
 */
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface FastFakeOptions {
  /** Number of content chunks in a streamed answer. Default 5. */
  streamChunks?: number;
  /** Delay before the response (simulated model latency). Default 0. */
  delayMs?: number;
  /** Delay between stream chunks. Default 0. */
  chunkDelayMs?: number;
}

export interface FastFake {
  /** Base URL for the target: http://127.0.0.1:<port>/v1 */
  baseUrl: string;
  requestCount(): number;
  close(): Promise<void>;
}

const STREAM_MARKER = '"stream":true';

export async function startFastOpenAiFake(options: FastFakeOptions = {}): Promise<FastFake> {
  const created = 1_700_000_000;
  const usage = { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 };
  const json = Buffer.from(
    JSON.stringify({
      id: 'chatcmpl-bench',
      object: 'chat.completion',
      created,
      model: 'bench-model',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from the bench upstream.' }, finish_reason: 'stop' }],
      usage,
    }),
  );
  const chunk = (payload: unknown) => Buffer.from(`data: ${JSON.stringify(payload)}\n\n`);
  const base = { id: 'chatcmpl-bench', object: 'chat.completion.chunk', created, model: 'bench-model' };
  const streamChunks: Buffer[] = [chunk({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })];
  for (let index = 0; index < (options.streamChunks ?? 5); index += 1) {
    streamChunks.push(chunk({ ...base, choices: [{ index: 0, delta: { content: `word${index} ` }, finish_reason: null }] }));
  }
  streamChunks.push(chunk({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
  streamChunks.push(Buffer.concat([chunk({ ...base, choices: [], usage }), Buffer.from('data: [DONE]\n\n')]));
  let count = 0;
  const sockets = new Set<Socket>();
  const delay = options.delayMs ?? 0;
  const chunkDelay = options.chunkDelayMs ?? 0;

  const server = createServer((request, response) => {
    let head = '';
    request.on('data', (data: Buffer) => {
      if (head.length < 4096) head += data.toString('latin1');
    });
    request.on('end', () => {
      count += 1;
      const respond = () => {
        if (!head.includes(STREAM_MARKER)) {
          response.writeHead(200, { 'content-type': 'application/json', 'content-length': json.length });
          response.end(json);
          return;
        }
        response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        if (chunkDelay === 0) {
          for (let index = 0; index < streamChunks.length - 1; index += 1) response.write(streamChunks[index]);
          response.end(streamChunks.at(-1));
          return;
        }
        let index = 0;
        const next = () => {
          if (index === streamChunks.length - 1) {
            response.end(streamChunks[index]);
            return;
          }
          response.write(streamChunks[index]);
          index += 1;
          setTimeout(next, chunkDelay);
        };
        next();
      };
      if (delay > 0) setTimeout(respond, delay);
      else respond();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requestCount: () => count,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
