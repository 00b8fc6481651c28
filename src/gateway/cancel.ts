/**
 * Cancellation of one gateway request when its client goes away.
 *
 * The gateway needs only a small part of AbortSignal: `aborted`, `reason` and one-shot 'abort'
 * listeners. `AbortHook` is that part (an AbortSignal is one, so callers with their own deadline
 * pass theirs), and `ClientCancel` implements it with a plain array: Node's AbortController
 * and EventTarget listeners cost several microseconds per request on the completion path, for
 * an event that almost never fires. undici accepts any object with addEventListener as a signal.
 */

/** What an 'abort' listener may be: a function or an object with handleEvent (as on EventTarget). */
export type AbortListener = ((event: Event) => void) | { handleEvent(event: Event): void };

/** The part of AbortSignal the gateway uses. */
export interface AbortHook {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: AbortListener, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: AbortListener): void;
}

const ABORT_EVENT = new Event('abort');

/** A one-shot cancellation: abort() runs every listener once; later listeners are not kept. */
export class ClientCancel implements AbortHook {
  aborted = false;
  reason: unknown = undefined;
  private listeners: AbortListener[] = [];

  abort(reason: unknown = new Error('aborted')): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) {
      if (typeof listener === 'function') listener(ABORT_EVENT);
      else listener.handleEvent(ABORT_EVENT);
    }
  }

  addEventListener(_type: 'abort', listener: AbortListener): void {
    if (!this.aborted) this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: AbortListener): void {
    const index = this.listeners.indexOf(listener);
    if (index >= 0) this.listeners.splice(index, 1);
  }
}
