export interface Check {
  readonly id: string;
  readonly status: string;
}
export declare const MUST_PASS: Readonly<Record<string, readonly string[]>>;
export declare function checksOf(folder: string, mode: 'client' | 'server', scenario: string): Check[];
export declare function baselineEntries(text: string, section: string): string[];
export declare function verdict(run: {
  readonly baseline: string;
  readonly mode: 'client' | 'server';
  readonly scenario: string;
  /** The suite's exit code; null when it was killed for taking too long. */
  readonly code: number | null;
  readonly output: string;
  readonly checks: readonly Check[];
}): { why: string | null; passed: boolean; note: string };
