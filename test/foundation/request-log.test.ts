import { describe, expect, it } from 'vitest';
import { cachedIsoTime, createRequestLog, type RequestLogFields } from '../../src/platform/logger.ts';

const fields = (index: number): RequestLogFields => ({
  request_id: `req-${index}`,
  org_id: null,
  gateway_id: 'api',
  method: 'GET',
  path: '/api/v1/org',
  status: 200,
  duration_ms: 1.25,
  threat_score: null,
  decision: null,
  pattern: null,
});

function capture() {
  const writes: string[] = [];
  return { writes, destination: { write: (chunk: string) => void writes.push(chunk) } };
}

describe('request log line', () => {
  it("writes pino's line format with exactly the request fields, held back at most briefly", async () => {
    const { writes, destination } = capture();
    const log = createRequestLog('info', destination);
    log.write(fields(1));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(writes).toHaveLength(1);
    const line = JSON.parse(writes[0]!);
    expect(Object.keys(line)).toEqual(['level', 'time', ...Object.keys(fields(1))]);
    expect(line.level).toBe('info');
    expect(Math.abs(Date.parse(line.time) - Date.now())).toBeLessThan(5_000);
    expect(line.request_id).toBe('req-1');
  });

  it('hands lines over in chunks and loses none on flush', () => {
    const { writes, destination } = capture();
    const log = createRequestLog('debug', destination);
    for (let index = 0; index < 500; index += 1) log.write(fields(index));
    expect(writes.length).toBeGreaterThan(0); // a full chunk is written at once
    expect(writes.length).toBeLessThan(50);
    log.flush();
    const lines = writes.join('').split('\n').filter((line) => line !== '');
    expect(lines.map((line) => JSON.parse(line).request_id)).toEqual(Array.from({ length: 500 }, (_, index) => `req-${index}`));
  });

  it('writes nothing when the level is above info', () => {
    const { writes, destination } = capture();
    const log = createRequestLog('warning', destination);
    log.write(fields(1));
    log.flush();
    expect(writes).toEqual([]);
  });

  it("stamps each line with the same time text as pino's isoTime, to the millisecond", () => {
    const instants = [Date.UTC(2026, 10, 24, 16, 12, 13, 0), Date.UTC(2026, 10, 24, 16, 12, 13, 7), Date.UTC(2026, 10, 24, 16, 12, 13, 42), Date.UTC(2026, 10, 24, 16, 12, 13, 999), Date.UTC(2026, 10, 24, 16, 12, 14, 100), Date.UTC(2027, 0, 1, 0, 0, 0, 5)];
    for (const now of instants) expect(cachedIsoTime(now)).toBe(`,"time":"${new Date(now).toISOString()}"`);
  });
});
