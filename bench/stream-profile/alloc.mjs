// Where a JSON completion's garbage comes from (issue #39 item 3, speed-json41 round): svc over a
// checkout's dist/ (SVC_DIR, default this checkout) in this process (app.inject, embedded PGlite,
// the fast fake upstream at UPSTREAM_BASE_URL), V8's sampling heap profiler counting objects the
// collector already freed too, over N completions after a warm-up. Prints bytes allocated per
// completion by the nearest svc function on the allocating stack (self: the allocating frame's own
// function when it is svc's) and young-generation collections per completion.
//   UPSTREAM_BASE_URL=http://127.0.0.1:PORT N=2000 node --expose-gc bench/stream-profile/alloc.mjs
import { Session } from 'node:inspector/promises';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { startInProcess } from './in-process.mjs';
const n = Number(process.env.N ?? 2000);
const { complete, close } = await startInProcess('svc-alloc-');
for (let index = 0; index < 500; index++) await complete();
await new Promise((r) => setTimeout(r, 1000));
let minor = 0;
let major = 0;
const observer = new PerformanceObserver((list) => { for (const entry of list.getEntries()) { if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) minor++; else if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) major++; } });
observer.observe({ entryTypes: ['gc'] });
const session = new Session();
session.connect();
await session.post('HeapProfiler.enable');
await session.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMinorGC: true, includeObjectsCollectedByMajorGC: true });
for (let index = 0; index < n; index++) await complete();
await new Promise((r) => setTimeout(r, 1000));
const { profile } = await session.post('HeapProfiler.stopSampling');
observer.disconnect();
const nearest = new Map();
const self = new Map();
let total = 0;
const walk = (node, svcFrame) => {
  const { url, functionName, lineNumber } = node.callFrame;
  const own = url.includes('/dist/') && !url.includes('node_modules') ? `${functionName || '(anonymous)'} ${url.replace(/.*\/dist\//, '')}:${lineNumber + 1}` : null;
  const frame = own ?? svcFrame;
  if (node.selfSize > 0) {
    total += node.selfSize;
    const key = frame ?? `(no svc frame) ${url.includes('node_modules/') ? url.split('node_modules/').pop().split('/')[0] : url.startsWith('node:') ? 'node' : functionName || '(native)'}`;
    nearest.set(key, (nearest.get(key) ?? 0) + node.selfSize);
    const leaf = `${functionName || '(anonymous)'} ${url.replace(/.*\/(dist|node_modules)\//, '$1/')}:${lineNumber + 1} <- ${frame ?? '-'}`;
    self.set(leaf, (self.get(leaf) ?? 0) + node.selfSize);
  }
  for (const child of node.children) walk(child, frame);
};
walk(profile.head, null);
console.log(`${n} completions: ${(total / n / 1024).toFixed(1)} KiB allocated per completion (sampled); young-generation collections ${(minor / n * 1000).toFixed(2)} per 1,000, full ${(major / n * 1000).toFixed(2)} per 1,000`);
console.log('by nearest svc function (bytes per completion):');
for (const [key, value] of [...nearest].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP ?? 40))) console.log(`  ${Math.round(value / n)}  ${key}`);
console.log('by allocating function <- nearest svc function (bytes per completion):');
for (const [key, value] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP ?? 40))) console.log(`  ${Math.round(value / n)}  ${key}`);
await close();
