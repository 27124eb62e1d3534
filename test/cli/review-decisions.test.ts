/** `ward review` and `ward replay` show each permission decision and request for input as one line in Ward's words, where it happened. */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeBundle } from '../export/support.js';
import { ASKED } from '../support/decisions.js';
import { ward } from '../support/ward-cli.js';

const RUN = '00000000-0000-4000-8000-0000000000aa';

/** A bundle of one turn, then a turn that asked everything a turn can ask. */
function askingBundle() {
  return makeBundle(1, {
    after: (store, conversationId) => store.journal.appendMany(conversationId, ASKED.map(({ event }) => ({ type: event.type, payload: event.payload, runId: RUN }))),
  });
}

/** The summaries of the printed lines `#seq time type  summary` of these event types. */
function summaries(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter((line) => / (permission_decision|elicitation_\w+) {2}/.test(line))
    .map((line) => line.slice(line.indexOf('  ') + 2));
}

describe('permission decisions in ward review and ward replay', () => {
  it('test_review_and_replay_print_every_permission_decision_and_request_for_input_in_wards_words', async () => {
    const bundle = askingBundle();
    const review = await ward(['review', bundle.file], { env: { WARD_HOME: path.join(bundle.dir, 'nowhere') } });
    expect(review.code).toBe(0);
    expect(summaries(review.stdout)).toEqual(ASKED.map(({ line }) => line));
    const replay = await ward(['replay', bundle.conversationId], { env: { WARD_HOME: path.join(bundle.dir, 'home') } });
    expect(replay.stderr).toBe('');
    expect(summaries(replay.stdout)).toEqual(ASKED.map(({ line }) => line));
  });
});
