/** Percentile of a sample (nearest rank); the sample is sorted in place. */
export function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  samples.sort((a, b) => a - b);
  const rank = Math.min(samples.length - 1, Math.max(0, Math.ceil((p / 100) * samples.length) - 1));
  return samples[rank]!;
}

export function round(value: number, digits = 3): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** Milliseconds taken by `fn`, with a high-resolution clock. */
export function timeMs(fn: () => void): number {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}
