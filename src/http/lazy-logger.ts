/**
 * Fastify gives every request a child logger (`request.log`) bound to its request id. A pino
 * child costs a serialization and redaction pass over its bindings, and svc rarely logs through
 * request.log (its request line is written once, in onResponse). LazyChildLogger has the logger
 * interface Fastify checks for and creates the real child on first use.
 */
import type { FastifyBaseLogger } from 'fastify';

type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildOptions = Parameters<FastifyBaseLogger['child']>[1];
type LogArgs = Parameters<FastifyBaseLogger['info']>;

export class LazyChildLogger {
  #child: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildOptions,
  ) {}

  get real(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.#child?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.real.level = level;
  }

  fatal(...args: LogArgs): void {
    this.real.fatal(...args);
  }

  error(...args: LogArgs): void {
    this.real.error(...args);
  }

  warn(...args: LogArgs): void {
    this.real.warn(...args);
  }

  info(...args: LogArgs): void {
    this.real.info(...args);
  }

  debug(...args: LogArgs): void {
    this.real.debug(...args);
  }

  trace(...args: LogArgs): void {
    this.real.trace(...args);
  }

  silent(...args: LogArgs): void {
    this.real.silent(...args);
  }

  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.real.child(bindings, options);
  }
}

export function lazyChildLogger(parent: FastifyBaseLogger, bindings: Bindings, options: ChildOptions): FastifyBaseLogger {
  return new LazyChildLogger(parent, bindings, options) as unknown as FastifyBaseLogger;
}
