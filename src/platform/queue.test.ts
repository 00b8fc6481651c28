import { describe, expect, it } from 'vitest';
import { createQueue, InProcessQueue, type JobQueue } from './queue.ts';

const redisUrl = /^rediss?:\/\//.test(process.env.REDIS_URL ?? '') ? process.env.REDIS_URL! : null;

const engines: Array<[string, () => JobQueue]> = [['in-process', () => new InProcessQueue()]];
if (redisUrl) engines.push(['bullmq', () => createQueue(redisUrl, `qtest:${Math.random().toString(36).slice(2)}:`)]);

describe.each(engines)('job queue (%s)', (_name, make) => {
  it('runs a job, retries a failing one with backoff, and reports health', async () => {
    const queue = make();
    try {
      const attempts: number[] = [];
      const done = new Promise<void>((resolve) => {
        queue.register<{ n: number }>('flaky', async (data, meta) => {
          attempts.push(meta.attempt);
          if (meta.attempt < 3) throw new Error('transient');
          expect(data.n).toBe(7);
          resolve();
        });
      });
      await queue.enqueue('flaky', { n: 7 }, { attempts: 3, backoffMs: 20 });
      await done;
      expect(attempts).toEqual([1, 2, 3]);
      const health = await queue.health();
      expect(health.ok).toBe(true);
      expect(health.kind).toBe(queue.kind);
    } finally {
      await queue.close();
    }
  });

  it('de-duplicates jobs by jobId while one is pending', async () => {
    const queue = make();
    try {
      let runs = 0;
      queue.register('once', async () => {
        runs++;
      });
      await Promise.all([
        queue.enqueue('once', {}, { jobId: 'same', delayMs: 50 }),
        queue.enqueue('once', {}, { jobId: 'same', delayMs: 50 }),
      ]);
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(runs).toBe(1);
    } finally {
      await queue.close();
    }
  });
});
