/**
 * Preloaded into the server by `npm run bench -- memory` (`node --import ./bench/memory-probe.mjs
 * dist/cli.js serve`), never by svc itself: every thread of the process (the main thread and each
 * worker thread, which inherit the preload through execArgv) writes what its own isolate holds to
 * `SVC_MEMORY_PROBE_DIR/thread-<id>.json` every `SVC_MEMORY_PROBE_MS` (default 2,000 ms):
 * `process.memoryUsage()` (heap used / total, external, arrayBuffers), V8's heap statistics
 * (committed, malloced, heap spaces), the WebAssembly memories the thread created (their
 * current size: PGlite's in the main thread, TF.js's in the semantic worker), the process's CPU
 * time and this thread's garbage collections (count and pause ms by kind, from perf_hooks). Plain JavaScript so
 * it loads into the compiled server without tsx.
 */
import { writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import { threadId } from 'node:worker_threads';

const directory = process.env.SVC_MEMORY_PROBE_DIR;
if (directory) {
  /** Every WebAssembly.Memory this thread made or got from an instance, held weakly. */
  const memories = new Set();
  const remember = (memory) => {
    if (memory instanceof WebAssembly.Memory) memories.add(new WeakRef(memory));
  };
  const exportsOf = (instance) => {
    for (const value of Object.values(instance?.exports ?? {})) remember(value);
  };
  /** The constructor, wrapped so that what it makes is handed to `seen` first. */
  const watched = (Original, seen) => new Proxy(Original, {
    construct(target, args) {
      const made = Reflect.construct(target, args);
      seen(made);
      return made;
    },
  });
  const OriginalInstance = WebAssembly.Instance;
  WebAssembly.Memory = watched(WebAssembly.Memory, remember);
  WebAssembly.Instance = watched(OriginalInstance, exportsOf);
  for (const name of ['instantiate', 'instantiateStreaming']) {
    const original = WebAssembly[name];
    if (typeof original !== 'function') continue;
    WebAssembly[name] = async function (...args) {
      const result = await original.apply(this, args);
      exportsOf(result instanceof OriginalInstance ? result : result?.instance);
      return result;
    };
  }
  /** This thread's garbage collections since it started: count and pause time (ms) by kind. */
  const collections = { minor: { count: 0, ms: 0 }, major: { count: 0, ms: 0 }, incremental: { count: 0, ms: 0 }, other: { count: 0, ms: 0 } };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = entry.detail?.kind;
      const bucket = kind === constants.NODE_PERFORMANCE_GC_MINOR ? collections.minor : kind === constants.NODE_PERFORMANCE_GC_MAJOR ? collections.major : kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL ? collections.incremental : collections.other;
      bucket.count += 1;
      bucket.ms += entry.duration;
    }
  }).observe({ entryTypes: ['gc'] });
  const mb = (bytes) => Math.round((bytes / 1048576) * 10) / 10;
  const file = join(directory, `thread-${threadId}.json`);
  const write = () => {
    const usage = process.memoryUsage();
    const heap = getHeapStatistics();
    const wasm = [];
    for (const reference of memories) {
      const memory = reference.deref();
      if (memory === undefined) memories.delete(reference);
      else wasm.push(mb(memory.buffer.byteLength));
    }
    const snapshot = {
      thread: threadId,
      at: Date.now(),
      heap_used_mb: mb(usage.heapUsed),
      heap_total_mb: mb(usage.heapTotal),
      heap_committed_mb: mb(heap.total_physical_size),
      malloced_mb: mb(heap.malloced_memory),
      external_mb: mb(usage.external),
      array_buffers_mb: mb(usage.arrayBuffers),
      wasm_memories_mb: wasm,
      cpu_s: Math.round(process.cpuUsage().user / 1e4 + process.cpuUsage().system / 1e4) / 100,
      gc: Object.fromEntries(Object.entries(collections).map(([kind, { count, ms }]) => [kind, { count, ms: Math.round(ms) }])),
      spaces: Object.fromEntries(getHeapSpaceStatistics().map((space) => [space.space_name, { size_mb: mb(space.space_size), used_mb: mb(space.space_used_size) }])),
    };
    try {
      writeFileSync(`${file}.tmp`, JSON.stringify(snapshot));
      renameSync(`${file}.tmp`, file);
    } catch {
      // the bench removed the directory: the server is stopping
    }
  };
  setInterval(write, Number(process.env.SVC_MEMORY_PROBE_MS ?? 2_000)).unref();
  write();
}
