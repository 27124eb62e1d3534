/** Token counts read as Intl's en-US grouping writes them, without creating an Intl.NumberFormat (issue 29). */
import { describe, expect, it } from 'vitest';
import { describeTokens, groupThousands } from '../../common/usage.js';

describe('token counts with thousands commas', () => {
  it('test_groups_thousands_exactly_as_intl_en_us_for_whole_counts_of_every_length', () => {
    const intl = new Intl.NumberFormat('en-US');
    for (const count of [0, 7, 56, 999, 1_000, 1_234, 99_999, 100_000, 1_234_567, 12_345_678_901, -1_234, 2 ** 53 - 1]) {
      expect(groupThousands(count), String(count)).toBe(intl.format(count));
    }
  });

  it('test_describes_a_turns_tokens_with_grouped_counts_and_the_cache_only_when_used', () => {
    expect(describeTokens({ input: 1_234, output: 56, cacheRead: 7_000, cacheCreation: 890 })).toBe('1,234 in · 56 out · 7,890 cache tokens');
    expect(describeTokens({ input: 12, output: 1_000_000, cacheRead: 0, cacheCreation: 0 })).toBe('12 in · 1,000,000 out tokens');
  });
});
