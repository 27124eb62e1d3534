/**
 * Highlighted code as React text (renderer/src/code/highlight.ts): spans with a colour class,
 * never HTML. The text is escaped by the caller (common/display.ts) before it is highlighted.
 */
import { Fragment, memo, type ReactNode } from 'react';
import { highlightLines, knownLanguage, type Line } from '../code/highlight.js';
import '../code/code.css';

/** One line's segments as spans (plain text runs stay bare text). */
export function LineText({ line }: { line: Line }): ReactNode {
  return line.map((segment, index) =>
    segment.className === null ? (
      <Fragment key={index}>{segment.text}</Fragment>
    ) : (
      <span key={index} className={segment.className}>
        {segment.text}
      </span>
    ),
  );
}

/** Highlighted texts of recently shown code blocks (virtualized rows mount and unmount). */
const CACHE_SIZE = 100;
const cache = new Map<string, Line[]>();
function linesOf(code: string, language: string | null): Line[] {
  const key = `${language ?? ''}\u0000${code}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const lines = highlightLines(code, language);
  cache.set(key, lines);
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
  return lines;
}

/** A code block's text, highlighted when its fence names a registered language. */
export const HighlightedCode = memo(function HighlightedCode({ code, language }: { code: string; language: string }) {
  const lines = linesOf(code, knownLanguage(language));
  return (
    <code className={knownLanguage(language) === null ? undefined : 'highlighted'}>
      {lines.map((line, index) => (
        <Fragment key={index}>
          {index > 0 && '\n'}
          <LineText line={line} />
        </Fragment>
      ))}
    </code>
  );
});
