/** D1: what the one display escaper shows of invisible, blank-rendering and emoji-selector code points. */
import { describe, expect, it } from 'vitest';
import { escapeForWindow, escapeOneLine, showArguments, showCommand } from '../../common/display.js';
import { toolErrorSentence } from '../../common/tool-error.js';

/** Unicode's Default_Ignorable_Code_Point, written out here (not taken from the code under test). */
const DEFAULT_IGNORABLE: ReadonlyArray<readonly [number, number]> = [
  [0x00ad, 0x00ad], [0x034f, 0x034f], [0x061c, 0x061c], [0x115f, 0x1160], [0x17b4, 0x17b5], [0x180b, 0x180f],
  [0x200b, 0x200f], [0x202a, 0x202e], [0x2060, 0x206f], [0x3164, 0x3164], [0xfe00, 0xfe0f], [0xfeff, 0xfeff],
  [0xffa0, 0xffa0], [0xfff0, 0xfff8], [0x1bca0, 0x1bca3], [0x1d173, 0x1d17a], [0xe0000, 0xe0fff],
];

const mark = (codePoint: number) => `\\u{${codePoint.toString(16)}}`;

describe('the display escaper (D1)', () => {
  it('test_every_default_ignorable_code_point_and_the_braille_blank_is_shown_as_a_mark', () => {
    for (const [from, to] of [...DEFAULT_IGNORABLE, [0x2800, 0x2800] as const]) {
      for (let codePoint = from; codePoint <= to; codePoint++) {
        expect(escapeOneLine(`a${String.fromCodePoint(codePoint)}b`, 100), `U+${codePoint.toString(16)}`).toBe(`a${mark(codePoint)}b`);
      }
    }
    // Tag characters spelling a hidden instruction show as marks, in a window too.
    expect(escapeForWindow('hi\u{E0069}\u{E0067}\u{E006E}')).toBe('hi\\u{e0069}\\u{e0067}\\u{e006e}');
  });

  it('test_one_emoji_presentation_selector_after_an_emoji_renders_but_runs_of_selectors_are_escaped', () => {
    expect(escapeOneLine('ok 👍\uFE0F and ❤\uFE0F', 100)).toBe('ok 👍\uFE0F and ❤\uFE0F');
    expect(escapeOneLine('👍\uFE0F\uFE0F\uFE0E', 100)).toBe('👍\\u{fe0f}\\u{fe0f}\\u{fe0e}');
    expect(escapeOneLine('👍\u{E0100}\u{E0101}', 100)).toBe('👍\\u{e0100}\\u{e0101}');
    expect(escapeOneLine('x\uFE0F', 100)).toBe('x\\u{fe0f}');
  });

  it('test_runs_of_three_or_more_blank_characters_collapse_to_a_visible_count', () => {
    expect(escapeOneLine(`ls${'\u2800'.repeat(400)}&& rm -rf ~`, 100)).toBe('ls ⟨400 blanks⟩ && rm -rf ~');
    expect(escapeOneLine(`a${'\u3164'.repeat(200)}${'\u115f\u1160\uffa0'}b`, 100)).toBe('a ⟨203 blanks⟩ b');
    expect(escapeOneLine('a \u00a0 \u2003 \u3000b', 100)).toBe('a ⟨6 blanks⟩ b');
    // Fewer than three, or ASCII spaces alone, are the text's own.
    expect(escapeOneLine('a\u00a0\u00a0b   c', 100)).toBe('a\u00a0\u00a0b   c');
    expect(escapeOneLine('a\u2800b', 100)).toBe('a\\u{2800}b');
    expect(showCommand(`ls${'\u2800'.repeat(10)}x`)).toBe('ls ⟨10 blanks⟩ x');
  });

  it('test_an_approvals_arguments_show_padding_as_a_count_on_one_bounded_line', () => {
    // Issue 31: the terminal's `tool:` line echoed 120 plain spaces; the card's rule counts them.
    expect(showArguments(`{"command":"ls${' '.repeat(120)}&& touch x"}`, 300)).toBe('{"command":"ls ⟨120 spaces⟩ && touch x"}');
    expect(showArguments(`{"a":"x\ny"}`, 300)).toBe('{"a":"x\\u{a}y"}');
    expect(showArguments('x'.repeat(400), 300)).toBe(`${'x'.repeat(299)}…`);
  });

  it('test_a_tool_error_reads_as_the_sentence_inside_the_clis_markup', () => {
    const preview = '<tool_use_error>Error: No such tool available: Bash. Bash is disabled.</tool_use_error>\n\n<system-reminder>\n<total_tokens>1 left</total_tokens>\n</system-reminder>';
    expect(toolErrorSentence(preview)).toBe('No such tool available: Bash. Bash is disabled.');
    expect(toolErrorSentence('plain failure\n  on two lines')).toBe('plain failure on two lines');
    expect(toolErrorSentence('<system-reminder>cut off')).toBe('');
  });
});
