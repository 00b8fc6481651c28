import type { Queryable } from './index.ts';

/**
 * Work a store write runs in its own transaction after the write (an audit entry): a failure of it
 * rolls the write back, so the write and its entry are stored together or not at all.
 */
export type WithinWrite<T> = (tx: Queryable, written: T) => Promise<unknown>;

/** The default `within`: nothing more to store. */
export const noWithin = async (): Promise<void> => undefined;
