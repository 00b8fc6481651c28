/**
 * How far V8 lets the main heap grow past what survived the last full collection before it runs
 * the next one (HEAP_GROWING_PERCENT, applied by `svc serve` in each serving process).
 *
 * V8 picks that factor itself, from how fast it collects against how fast the program allocates:
 * up to 4× on a machine with several GB of memory. svc's server keeps about 100 MB live (modules,
 * detection automata and catalogues, caches) and allocates short-lived request data, so under
 * steady load its heap climbed from ~170 to ~266 MB committed between two full collections and the
 * RSS with it (issue #39 item 6, docs/benchmarks.md). A fixed factor of 1 + percent/100 makes V8
 * collect once the heap is that much above the live set: more frequent full collections (their
 * marking runs on V8's background threads), a lower top. It is no limit: a burst of live data
 * grows the heap as far as it needs, one collection at a time, never an out-of-memory exit as a
 * `--max-old-space-size` below the need would be.
 */
import { setFlagsFromString } from 'node:v8';

/** Node's own flag on the command line wins over HEAP_GROWING_PERCENT (an operator's experiment). */
const FLAG = /^--heap[-_]growing[-_]percent(=|$)/;

/**
 * Sets V8's heap growing factor to 1 + percent/100 for this process (every isolate: the main
 * thread's and the worker threads'); 0 leaves V8's own choice. Returns whether it set it.
 */
export function limitHeapGrowth(percent: number, execArgv: readonly string[] = process.execArgv): boolean {
  if (percent <= 0 || execArgv.some((argument) => FLAG.test(argument))) return false;
  setFlagsFromString(`--heap-growing-percent=${Math.round(percent)}`);
  return true;
}
