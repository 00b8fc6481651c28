/**
 * A bound on how long a caller waits for something that may hang while a dependency is down
 * (a Redis command with unlimited retries, a database connect). The work itself is not
 * cancelled; its eventual failure is swallowed so it never becomes an unhandled rejection.
 */

export class DeadlineExceeded extends Error {
  constructor(readonly what: string, readonly ms: number) {
    super(`${what} did not finish within ${ms} ms`);
    this.name = 'DeadlineExceeded';
  }
}

export async function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  work.catch(() => undefined);
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new DeadlineExceeded(what, ms)), ms);
        timer.unref();
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
