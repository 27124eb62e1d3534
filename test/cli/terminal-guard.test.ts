/** D1's last line of defence: whatever a command writes, the terminal receives nothing it would act on. */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { writeJson } from '../../main/cli/io.js';
import { TerminalGuard } from '../../main/cli/terminal-guard.js';
import { HOSTILE_TEXT, UNSAFE_FOR_TERMINAL } from '../support/hostile.js';

/** A guard over a stream that keeps what reaches it. */
function guarded(): { guard: TerminalGuard; received: () => Promise<string> } {
  const target = new PassThrough();
  let text = '';
  target.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const guard = new TerminalGuard(target);
  return { guard, received: () => new Promise((resolve) => guard.end(() => setImmediate(() => resolve(text)))) };
}

describe('the terminal guard in front of stdout and stderr', () => {
  it('test_escape_sequences_controls_bidi_and_invisible_characters_reach_the_terminal_only_as_marks', async () => {
    const { guard, received } = guarded();
    guard.write(`${HOSTILE_TEXT}\ttabbed\n`);
    // A character cut between two writes of bytes still arrives whole.
    const bytes = Buffer.from('\u202e\u{E0041}', 'utf8');
    guard.write(bytes.subarray(0, 2));
    guard.write(bytes.subarray(2));
    const text = await received();
    expect(text).not.toMatch(UNSAFE_FOR_TERMINAL);
    expect(text).toContain('\\u{1b}]52;c;');
    expect(text).toContain('\\u{d}\nok: /tmp/chat.wardbundle is intact and signed\n');
    expect(text).toContain('\ttabbed\n');
    expect(text.endsWith('\\u{202e}\\u{e0041}')).toBe(true);
  });

  it('test_json_output_stays_json_with_invisible_characters_as_json_escapes', async () => {
    const { guard, received } = guarded();
    const value = { title: `${HOSTILE_TEXT} 👍\uFE0F`, nested: ['\u{E0041}\u009b\u2028'] };
    writeJson(guard, value);
    const text = await received();
    expect(text).not.toMatch(UNSAFE_FOR_TERMINAL);
    expect(text).toContain('\\u202e');
    expect(text).toContain('\\udb40\\udc41');
    expect(JSON.parse(text)).toEqual(value);
  });
});
