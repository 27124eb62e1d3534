/** E4: a bundle whose last events were cut names the first one missing, whatever else it finds. */
import { describe, expect, it } from 'vitest';
import { verifyBundle } from '../../main/export/bundle.js';
import { makeBundle, withLines } from './support.js';

describe('a bundle cut short (E4)', () => {
  it.each([1, 3, 15])('test_cutting_the_last_%s_events_names_the_first_missing_sequence_number', async (cut) => {
    const bundle = makeBundle(2);
    const file = withLines(bundle, (lines) => lines.slice(0, -cut));
    const firstMissing = 16 - cut + 1;
    const verdict = await verifyBundle(file);
    expect(verdict).toMatchObject({ ok: false, firstBadSeq: firstMissing });
    expect(verdict.problems).toEqual([
      cut === 1 ? 'event 16 is missing' : `events ${firstMissing} to 16 are missing`,
      `the statement commits to 16 events, the journal has ${16 - cut} lines`,
      'journal.jsonl is not the file the statement commits to (its SHA-256 differs)',
    ]);
  });
});
