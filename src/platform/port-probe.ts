/**
 * Checks that HOST:PORT can be bound before svc opens its database or starts background work,
 * so a busy port ends startup with one clear line instead of a stack trace after state was
 * touched. The probe binds exclusively and releases at once; the real bind follows within
 * milliseconds, and a loss of that race is reported the same way (see `PortInUseError.from`).
 */
import { createServer } from 'node:net';

export class PortInUseError extends Error {
  readonly code: 'PORT_IN_USE' | 'PORT_FORBIDDEN';
  constructor(
    readonly host: string,
    readonly port: number,
    reason: 'in_use' | 'forbidden',
  ) {
    super(
      reason === 'in_use'
        ? `port ${port} on ${host} is already in use; stop whatever listens there or start svc with another PORT (e.g. PORT=${port === 65535 ? port - 1 : port + 1})`
        : `port ${port} on ${host} may not be bound by this user (ports below 1024 need privileges); start svc with another PORT (e.g. PORT=8080)`,
    );
    this.code = reason === 'in_use' ? 'PORT_IN_USE' : 'PORT_FORBIDDEN';
    this.name = 'PortInUseError';
  }

  /** The bind error of a listen call as a PortInUseError, or null for any other error. */
  static from(error: unknown, host: string, port: number): PortInUseError | null {
    const code = (error as NodeJS.ErrnoException | null)?.code;
    if (code === 'EADDRINUSE') return new PortInUseError(host, port, 'in_use');
    if (code === 'EACCES') return new PortInUseError(host, port, 'forbidden');
    return null;
  }
}

/** Resolves when HOST:PORT can be bound (port 0 always can); rejects with PortInUseError. */
export function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error) => reject(PortInUseError.from(error, host, port) ?? error));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve()));
  });
}
