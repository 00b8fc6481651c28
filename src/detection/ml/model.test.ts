import { describe, expect, it } from 'vitest';
import { softmax } from './model.ts';

describe('softmax over a row of model logits', () => {
  it('turns the row at an offset into probabilities that sum to one, in the logits’ order', () => {
    // Two rows of three logits (an NLI model's output for two premises); the second row is read.
    const logits = Float32Array.from([9, 9, 9, 1, 2, 3]);
    const probabilities = softmax(logits, 3, 3);
    expect(probabilities).toHaveLength(3);
    expect(probabilities.reduce((total, value) => total + value, 0)).toBeCloseTo(1, 12);
    expect(probabilities[0]!).toBeLessThan(probabilities[1]!);
    expect(probabilities[1]!).toBeLessThan(probabilities[2]!);
    expect(probabilities[2]!).toBeCloseTo(Math.exp(3) / (Math.exp(1) + Math.exp(2) + Math.exp(3)), 12);
  });

  it('stays finite for logits whose exponentials overflow a double', () => {
    const probabilities = softmax([1_000, 999, -1_000], 0, 3);
    expect(probabilities.every(Number.isFinite)).toBe(true);
    expect(probabilities[0]!).toBeCloseTo(1 / (1 + Math.exp(-1)), 12);
    expect(probabilities[2]!).toBe(0);
  });
});
