/**
 * The semantic tier's worker thread: loads the sentence embedder (USE-lite, ~240 MB, one WASM
 * thread) and the semantic head once, then answers `{ id, text, kind }` with the highest window
 * probability. Runs off the event loop so a 60 ms embedding of a long tool output never delays
 * the small requests served beside it (worker-scorer.ts holds the queue and the cache; its
 * protocol: `{ id, result }`, `{ id, skipped }` or `{ id, error }`).
 */
import { parentPort } from 'node:worker_threads';
import { createEmbedder } from './embedder.ts';
import { loadSemanticHead, selectWindows, type SemanticKind } from './semantic-head.ts';

interface Job { id: number; text: string; kind: SemanticKind }

const port = parentPort;
if (port === null) throw new Error('semantic-worker.ts must run as a worker thread');

const ready = (async () => {
  const head = loadSemanticHead();
  const embedder = await createEmbedder({ cacheEntries: 1024 });
  if (embedder.id !== head.embedderId) throw new Error(`semantic head was trained on ${head.embedderId}, embedder is ${embedder.id}`);
  return { head, embedder };
})();
ready.then(() => port.postMessage({ ready: true }), (error: unknown) => port.postMessage({ ready: false, error: error instanceof Error ? error.message : String(error) }));

port.on('message', (job: Job) => {
  void (async () => {
    try {
      const { head, embedder } = await ready;
      const windows = selectWindows(job.text);
      if (windows.length === 0) {
        port.postMessage({ id: job.id, skipped: 'no English sentence: the sentence encoder reads English only' });
        return;
      }
      const vectors = await embedder.embed(windows);
      let probability = 0;
      let window = -1;
      vectors.forEach((vector, index) => {
        const value = head.probability(vector, job.kind);
        if (value > probability) [probability, window] = [value, index];
      });
      port.postMessage({ id: job.id, result: { probability, window: window < 0 ? '' : (windows[window] as string).slice(0, 160), windows: windows.length } });
    } catch (error) {
      port.postMessage({ id: job.id, error: error instanceof Error ? error.message : String(error) });
    }
  })();
});
