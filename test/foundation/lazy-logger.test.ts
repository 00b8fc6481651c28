import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { lazyChildLogger } from '../../src/http/lazy-logger.ts';

describe('lazy request logger', () => {
  it('creates the pino child only when something is logged, with the request bindings', () => {
    const lines: string[] = [];
    const parent = pino({ redact: ['secret'] }, new Writable({ write: (chunk, _encoding, done) => { lines.push(String(chunk)); done(); } }));
    let children = 0;
    const child = parent.child.bind(parent);
    parent.child = ((...args: Parameters<typeof child>) => { children += 1; return child(...args); }) as typeof parent.child;

    const logger = lazyChildLogger(parent, { reqId: 'req-1' }, {});
    expect(typeof logger.info).toBe('function');
    expect(logger.level).toBe('info');
    expect(children).toBe(0);

    logger.warn({ secret: 'hunter2' }, 'upstream slow');
    logger.error('failed');
    expect(children).toBe(1);
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records.map((record) => [record.reqId, record.msg])).toEqual([['req-1', 'upstream slow'], ['req-1', 'failed']]);
    expect(records[0]!.secret).toBe('[Redacted]');
  });
});
