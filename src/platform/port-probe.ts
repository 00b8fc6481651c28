/**
 * Checks that HOST:PORT can be bound before svc opens its database or starts background work,
 * so a busy port ends startup with one clear line instead of a stack trace after state was
 * touched. The probe binds exclusively and releases at once; the real bind follows within
 * milliseconds, and a loss of that race is reported the same way (see `PortInUseError.from`).
 */
import { createServer } from 'node:net';

export class PortInUseError extends Error {
  readonly code: 'PORT_IN_USE' | 'PORT_FORBIDDEN';
  /**
   * `suggestion`: a port found free next to the busy one (`freePortNear`), or null when none was
   * looked for or found; the hint names a port only when it was seen free.
   */
  constructor(
    readonly host: string,
    readonly port: number,
    reason: 'in_use' | 'forbidden',
    readonly suggestion: number | null = null,
  ) {
    const another = suggestion === null ? 'another PORT' : `another PORT (e.g. PORT=${suggestion}, free just now)`;
    super(
      reason === 'in_use'
        ? `port ${port} on ${host} is already in use; stop whatever listens there or start svc with ${another}`
        : `port ${port} on ${host} may not be bound by this user (ports below 1024 need privileges); start svc with ${another}`,
    );
    this.code = reason === 'in_use' ? 'PORT_IN_USE' : 'PORT_FORBIDDEN';
    this.name = 'PortInUseError';
  }

  /**
   * The bind error of a listen call as a PortInUseError, or null for any other error; the hint
   * names a port found free next to this one (up to SUGGESTION_TRIES, from 1024 for a privileged one).
   */
  static async from(error: unknown, host: string, port: number): Promise<PortInUseError | null> {
    const code = (error as NodeJS.ErrnoException | null)?.code;
    if (code === 'EADDRINUSE') return new PortInUseError(host, port, 'in_use', await freePortNear(host, port));
    if (code === 'EACCES') return new PortInUseError(host, port, 'forbidden', await freePortNear(host, Math.max(port, 8079)));
    return null;
  }
}

/** How many ports after a busy one are tried for the hint. */
const SUGGESTION_TRIES = 20;

/** Whether HOST:PORT can be bound now (bound exclusively and released at once). */
function canBind(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** The first port after `port` (up to SUGGESTION_TRIES of them, below 65536) that can be bound now, or null. */
export async function freePortNear(host: string, port: number): Promise<number | null> {
  for (let candidate = port + 1; candidate <= Math.min(65_535, port + SUGGESTION_TRIES); candidate++) {
    if (await canBind(host, candidate)) return candidate;
  }
  return null;
}

/** Resolves when HOST:PORT can be bound (port 0 always can); rejects with PortInUseError. */
export function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error) => void PortInUseError.from(error, host, port).then((refusal) => reject(refusal ?? error), reject));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve()));
  });
}
