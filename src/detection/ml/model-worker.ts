/**
 * The local model tier's worker thread: loads the operator's ONNX text classifier once (model.ts,
 * settings from workerData) and answers `{ id, text, kind }` with its reading. Runs off the event
 * loop so a 100 ms DeBERTa pass over a long tool output never delays the small requests served
 * beside it (worker-scorer.ts holds the queue, the cache and the deadline).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { DetectionModelError, loadTextClassifier, type ModelSettings } from './model.ts';

interface Job { id: number; text: string; kind: string }

const port = parentPort;
if (port === null) throw new Error('model-worker.ts must run as a worker thread');
const { dir, ...settings } = workerData as { dir: string } & ModelSettings;

const ready = loadTextClassifier(dir, settings);
ready.then(
  () => port.postMessage({ ready: true }),
  (error: unknown) => port.postMessage({ ready: false, error: error instanceof Error ? error.message : String(error), ...(error instanceof DetectionModelError ? { reason: error.reason } : {}) }),
);

// One text at a time: the runtime's one thread is the tier's whole budget.
let chain: Promise<void> = Promise.resolve();
port.on('message', (job: Job) => {
  chain = chain.then(async () => {
    try {
      const classifier = await ready;
      const reading = await classifier.classify(job.text);
      port.postMessage({ id: job.id, result: reading });
    } catch (error) {
      port.postMessage({ id: job.id, error: error instanceof Error ? error.message : String(error) });
    }
  });
});
