/**
 * The two message-channel upstream transports the bridge speaks:
 *
 * - stdio: svc spawns a command from the operator's allow-list (MCP_STDIO_SERVERS; never a command
 *   an API client sent) with only PATH, HOME and the entry's own environment — none of svc's
 *   secrets — and exchanges newline-delimited JSON-RPC on its stdin/stdout. stderr is discarded.
 *   A line over 16 MiB kills the process. One process per MCP session.
 * - legacy HTTP+SSE (protocol revision 2024-11-05): GET the server's SSE URL, wait for its
 *   `endpoint` event, POST messages there. The endpoint must be on the SSE URL's origin (a server
 *   cannot send svc's POSTs elsewhere), and every connection goes through the proxy's dispatcher
 *   (the SSRF-guarded one unless private targets are allowed).
 */
import { spawn } from 'node:child_process';
import { request as undiciRequest, type Dispatcher } from 'undici';
import type { Channel, ChannelHandlers } from './bridge.ts';
import { isRequest, rpcError, validMessage, type JsonRpcMessage } from './jsonrpc.ts';
import { SseParser } from './sse.ts';

const MAX_LINE_CHARS = 16 * 1024 * 1024;
const ENDPOINT_TIMEOUT_MS = 10_000;

export interface StdioCommand {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string | null;
}

export function openStdio(command: StdioCommand, handlers: ChannelHandlers): Promise<Channel> {
  return new Promise((resolve, reject) => {
    const child = spawn(command.command, [...command.args], { env: { ...command.env }, ...(command.cwd === null ? {} : { cwd: command.cwd }), stdio: ['pipe', 'pipe', 'ignore'], shell: false });
    let closed = false;
    const finish = () => {
      if (closed) return;
      closed = true;
      handlers.onclose();
    };
    let partial = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      partial += chunk;
      let newline = partial.indexOf('\n');
      while (newline >= 0) {
        const line = partial.slice(0, newline).trim();
        partial = partial.slice(newline + 1);
        if (line !== '') {
          try {
            const message = JSON.parse(line) as unknown;
            if (validMessage(message)) handlers.onmessage(message as JsonRpcMessage);
          } catch {
            // Not JSON-RPC (a server logging to stdout): dropped, never relayed.
          }
        }
        newline = partial.indexOf('\n');
      }
      if (partial.length > MAX_LINE_CHARS) child.kill('SIGKILL');
    });
    child.stdin.on('error', () => undefined);
    child.once('error', (error) => {
      finish();
      reject(error);
    });
    child.once('exit', finish);
    child.once('spawn', () =>
      resolve({
        send(message) {
          if (!closed && child.stdin.writable) child.stdin.write(`${JSON.stringify(message)}\n`);
        },
        async close() {
          if (child.exitCode !== null || child.signalCode !== null) return;
          const exited = new Promise<void>((done) => child.once('exit', () => done()));
          child.stdin.end();
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), 2_000);
          await exited;
          clearTimeout(timer);
        },
      }),
    );
  });
}

export async function openSse(url: string, dispatcher: Dispatcher, handlers: ChannelHandlers): Promise<Channel> {
  const controller = new AbortController();
  const stream = await undiciRequest(url, { method: 'GET', headers: { accept: 'text/event-stream' }, dispatcher, signal: controller.signal, headersTimeout: ENDPOINT_TIMEOUT_MS, bodyTimeout: 0 });
  if (stream.statusCode !== 200 || !String(stream.headers['content-type'] ?? '').toLowerCase().startsWith('text/event-stream')) {
    await stream.body.dump().catch(() => undefined);
    throw new Error(`SSE endpoint answered ${stream.statusCode}`);
  }
  const origin = new URL(url).origin;
  let closed = false;
  const finish = () => {
    if (closed) return;
    closed = true;
    controller.abort();
    handlers.onclose();
  };
  const endpoint = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no endpoint event')), ENDPOINT_TIMEOUT_MS);
    const parser = new SseParser();
    const decoder = new TextDecoder();
    let announced = false;
    void (async () => {
      for await (const chunk of stream.body) {
        for (const event of parser.feed(decoder.decode(chunk as Buffer, { stream: true }))) {
          if (event.event === 'endpoint' && !announced && event.data !== undefined) {
            announced = true;
            clearTimeout(timer);
            let target: URL | null = null;
            try {
              target = new URL(event.data, url);
            } catch {
              target = null;
            }
            if (target === null || target.origin !== origin) reject(new Error('endpoint on another origin'));
            else resolve(target.href);
            continue;
          }
          if ((event.event === undefined || event.event === 'message') && event.data !== undefined && announced) {
            try {
              const message = JSON.parse(event.data) as unknown;
              if (validMessage(message)) handlers.onmessage(message as JsonRpcMessage);
            } catch {
              // Not JSON: dropped, never relayed.
            }
          }
        }
      }
    })()
      .catch(() => undefined)
      .finally(() => {
        clearTimeout(timer);
        reject(new Error('stream ended'));
        finish();
      });
  }).catch((error: unknown) => {
    finish();
    throw error;
  });
  // POSTs go one after another: the server sees the messages in the order the client sent them.
  let queue: Promise<void> = Promise.resolve();
  return {
    send(message) {
      if (closed) return;
      queue = queue.then(() => post(message));
    },
    async close() {
      finish();
    },
  };

  function post(message: JsonRpcMessage): Promise<void> {
    return undiciRequest(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(message), dispatcher, headersTimeout: 30_000, bodyTimeout: 30_000 })
        .then(async (answer) => {
          await answer.body.dump().catch(() => undefined);
          if (answer.statusCode >= 300 && isRequest(message)) handlers.onmessage(rpcError(message.id!, -32000, `Upstream refused the message (HTTP ${answer.statusCode})`));
        })
        .catch(() => {
          if (isRequest(message)) handlers.onmessage(rpcError(message.id!, -32000, 'Upstream MCP server unreachable'));
        });
  }
}
