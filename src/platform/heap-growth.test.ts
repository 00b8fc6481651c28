import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { limitHeapGrowth } from './heap-growth.ts';

const module = fileURLToPath(new URL('./heap-growth.ts', import.meta.url));

/**
 * The largest old space (MB committed) of a fresh process that sets the growing factor with
 * limitHeapGrowth(percent), keeps ~80 MB live and replaces a share of it while allocating garbage.
 */
function largestOldSpace(percent: number): number {
  const script = `
    import { getHeapSpaceStatistics } from 'node:v8';
    import { limitHeapGrowth } from ${JSON.stringify(module)};
    if (!limitHeapGrowth(${percent}, [])) throw new Error('not set');
    const live = Array.from({ length: 1_000_000 }, (_, index) => ({ index, text: 'x' + index }));
    let largest = 0;
    let sink;
    for (let round = 0; round < 6_000_000; round += 1) {
      sink = { round, text: 'y' + round };
      if (round % 3 === 0) live[round % live.length] = sink;
      if (round % 20_000 === 0) largest = Math.max(largest, getHeapSpaceStatistics().find((space) => space.space_name === 'old_space').space_size);
    }
    process.stdout.write(String(largest / 1048576));
  `;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(child.status, child.stderr).toBe(0);
  return Number(child.stdout);
}

describe('the heap growing factor', () => {
  it('makes V8 collect the old space sooner the lower it is set', () => {
    const tight = largestOldSpace(10);
    const loose = largestOldSpace(300);
    expect(tight).toBeLessThan(loose * 0.75);
  }, 180_000);

  it('is left to V8 at 0, and to node when the command line sets it', () => {
    expect(limitHeapGrowth(0, [])).toBe(false);
    expect(limitHeapGrowth(25, ['--enable-source-maps', '--heap-growing-percent=50'])).toBe(false);
    expect(limitHeapGrowth(25, ['--heap_growing_percent=50'])).toBe(false);
  });
});
