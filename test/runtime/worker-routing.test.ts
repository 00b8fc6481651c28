/**
 * Forwarding between workers (src/platform/worker-routing.ts), in one process: a "public" server
 * plays the worker a client reached, a private listener plays the worker that holds the session.
 * The end-to-end case (two real workers, an MCP stdio session and a legacy SSE stream reached
 * from every connection) is in test/runtime/workers.test.ts (PostgreSQL + Redis).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSocketDir, listenPrivately, removeStaleSocketDirs, workerRouting } from '../../src/platform/worker-routing.ts';
import { waitFor } from '../helpers/wait.ts';

describe('requests for a session another worker holds', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-routing-'));
  const here = workerRouting({ workerId: 1, dir });
  const seen: Array<{ address: string | undefined; headers: IncomingHttpHeaders; body: string }> = [];
  const unreachable: string[] = [];
  const ends: Array<(last?: string) => void> = [];
  let owner: Server | null;
  let front: Server;
  let port = 0;

  beforeAll(async () => {
    owner = await listenPrivately(
      (raw, res) => {
        // "?early" answers before reading the body, as a body limit or a refused credential does.
        if (raw.url?.endsWith('?early') === true) {
          res.writeHead(413, { 'content-type': 'application/json' }).end('{"error":"too large"}');
          return;
        }
        let body = '';
        raw.setEncoding('utf8');
        raw.on('data', (chunk: string) => (body += chunk));
        raw.on('end', () => {
          seen.push({ address: raw.socket.remoteAddress, headers: raw.headers, body });
          // An event stream in two parts, the second after a pause: relayed as it comes.
          res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 'abc.w2' });
          res.write('data: one\n\n');
          // "open" asks for a stream that stays open until the hop is ended.
          if (body !== 'open') setTimeout(() => res.end('data: two\n\n'), 50);
        });
      },
      { workerId: 2, dir },
    );
    front = createServer((raw, res) => {
      const session = String(raw.headers['mcp-session-id'] ?? '');
      const target = here.ownerElsewhere(session);
      if (target === null) {
        res.end('served here');
        return;
      }
      const end = here.forward(raw, res, target, {
        unreachable: () => {
          unreachable.push(session);
          res.end('served here after all');
        },
        failed: () => res.writeHead(503).end(),
      });
      ends.push(end);
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    port = (front.address() as AddressInfo).port;
  });

  afterAll(async () => {
    owner?.close();
    front?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const send = (headers: Record<string, string>, body: string | string[], method = 'POST', path = '/mcp/s1?x=1') =>
    new Promise<{ status: number; headers: IncomingHttpHeaders; chunks: string[] }>((resolve, reject) => {
      const outgoing = request({ host: '127.0.0.1', port, method, path, headers: { 'content-type': 'application/json', ...headers }, agent: false }, (response) => {
        const chunks: string[] = [];
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, chunks }));
      });
      outgoing.on('error', reject);
      // Several parts (chunked when the headers say so).
      if (Array.isArray(body)) {
        for (const part of body) outgoing.write(part);
        outgoing.end();
      } else outgoing.end(body);
    });

  it('tags ids with the worker that issued them, and knows its own', () => {
    expect(here.localId('abc')).toBe('abc.w1');
    expect(here.ownerElsewhere('abc.w1')).toBeNull();
    expect(here.ownerElsewhere('abc.w2')).toBe(2);
    expect(here.ownerElsewhere('abc')).toBeNull();
    expect(here.ownerElsewhere('abc.w0')).toBeNull();
    const single = workerRouting({ workerId: null });
    expect(single.enabled).toBe(false);
    expect(single.localId('abc')).toBe('abc');
    expect(single.ownerElsewhere('abc.w2')).toBeNull();
  });

  it('pipes the request to the owner with the client address, and relays the answer as it streams', async () => {
    const answer = await send({ 'mcp-session-id': 'abc.w2', 'x-svc-peer': '203.0.113.9' }, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}');
    expect(answer.status).toBe(200);
    expect(answer.headers['mcp-session-id']).toBe('abc.w2');
    expect(answer.chunks.join('')).toBe('data: one\n\ndata: two\n\n');
    expect(answer.chunks.length).toBeGreaterThanOrEqual(2);
    const last = seen.at(-1)!;
    expect(last.body).toBe('{"jsonrpc":"2.0","id":1,"method":"tools/list"}');
    expect(last.headers['mcp-session-id']).toBe('abc.w2');
    // The client's own X-Svc-Peer is not believed: the owner sees the address the client came from.
    expect(last.address).toBe('127.0.0.1');
    expect(last.headers['x-svc-peer']).toBeUndefined();
  });

  it('serves the request where it arrived when the owner is gone, without reading it', async () => {
    const before = seen.length;
    const answer = await send({ 'mcp-session-id': 'abc.w7' }, '{"jsonrpc":"2.0","id":2,"method":"tools/list"}');
    expect(answer.chunks.join('')).toBe('served here after all');
    expect(unreachable).toEqual(['abc.w7']);
    expect(seen.length).toBe(before);
  });

  it('ends a forwarded stream cleanly when the worker that relays it shuts down', async () => {
    const pending = send({ 'mcp-session-id': 'abc.w2' }, 'open');
    await waitFor(() => (seen.at(-1)?.body === 'open' ? true : undefined), 10_000, 10);
    await new Promise((resolve) => setTimeout(resolve, 50));
    ends.at(-1)!('event: error\ndata: bye\n\n');
    const answer = await pending;
    expect(answer.status).toBe(200);
    expect(answer.chunks.join('')).toBe('data: one\n\nevent: error\ndata: bye\n\n');
  });

  it('frames a chunked body again on the hop, whatever the method', async () => {
    const answer = await send({ 'mcp-session-id': 'abc.w2', 'transfer-encoding': 'chunked' }, ['{"a":', '1}'], 'DELETE');
    expect(answer.status).toBe(200);
    expect(seen.at(-1)!.body).toBe('{"a":1}');
  });

  it("relays the owner's early answer to a body it did not read, not a 503", async () => {
    const answer = await send({ 'mcp-session-id': 'abc.w2' }, 'x'.repeat(5 * 1_048_576), 'POST', '/mcp/s1?early');
    expect(answer.status).toBe(413);
    expect(answer.chunks.join('')).toBe('{"error":"too large"}');
  });
});

describe('socket directories left by a primary that was killed', () => {
  const base = mkdtempSync(join(tmpdir(), 'svc-sweep-test-'));
  afterAll(() => rmSync(base, { recursive: true, force: true }));
  // The pid of a process that has exited.
  const deadPid = spawnSync(process.execPath, ['-e', '']).pid!;
  const here = `${hostname()}/${readlinkSync('/proc/self/ns/pid')}`;
  const make = (name: string, pid?: number, place = here) => {
    const dir = join(base, name);
    mkdirSync(dir, { mode: 0o700 });
    if (pid !== undefined) writeFileSync(join(dir, 'primary.pid'), `${pid} ${place}\n`);
    writeFileSync(join(dir, 'w1.sock'), '');
    return dir;
  };

  it('removes those of primaries that are gone, and nothing else', () => {
    const dead = make('svc-cluster-dead1', deadPid);
    const live = make('svc-cluster-live1', process.pid);
    const unknown = make('svc-cluster-nofile');
    const foreign = make('other-dir', deadPid);
    const otherNamespace = make('svc-cluster-container', deadPid, `${hostname()}/pid:[1]`);
    expect(removeStaleSocketDirs(base)).toEqual([dead]);
    expect([dead, live, unknown, foreign, otherNamespace].map((dir) => existsSync(dir))).toEqual([false, true, true, true, true]);
  });

  it('a new primary names itself in its directory and clears the stale ones', () => {
    const dead = make('svc-cluster-dead2', deadPid);
    const previous = process.env.TMPDIR;
    process.env.TMPDIR = base;
    try {
      const dir = createSocketDir();
      expect(dir.startsWith(join(base, 'svc-cluster-'))).toBe(true);
      expect(readFileSync(join(dir, 'primary.pid'), 'utf8').trim()).toBe(`${process.pid} ${here}`);
      expect(existsSync(dead)).toBe(false);
      expect(removeStaleSocketDirs(base)).toEqual([]);
    } finally {
      if (previous === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = previous;
    }
  });
});
