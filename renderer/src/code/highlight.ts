/**
 * Syntax highlighting for code blocks and diffs (issues 26 and 31): highlight.js's core with the
 * languages registered below, nothing else (an unknown language is plain text). Chosen over Shiki
 * with its JavaScript regex engine by measurement (see the commit that added it): 23 KB against
 * 144 KB gzipped for the same 12 languages, and about 5 times faster on a 5,000-line file. Neither
 * needs eval or wasm. highlight.js's HTML output is never used: an emitter of our own collects
 * plain text runs with their scope, and React renders them as text (U3, nothing is ever HTML).
 */
import hljs from 'highlight.js/lib/core';
import type { Emitter } from 'highlight.js';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

/** A run of text and the class of its innermost scope (null: plain). */
export interface Segment {
  readonly text: string;
  readonly className: string | null;
}
export type Line = readonly Segment[];

/** Collects highlight.js's parse as flat segments instead of HTML. */
class SegmentEmitter implements Emitter {
  readonly segments: Segment[] = [];
  private readonly scopes: string[] = [];

  addText(text: string): void {
    if (text !== '') this.segments.push({ text, className: this.scopes.at(-1) ?? null });
  }

  startScope(name: string): void {
    // `title.function`, `meta keyword`: the first word picks the colour; only [a-z_] reach a class name.
    const first = /^[a-z_]+/.exec(name.replace(/^language:.*/, ''))?.[0];
    this.scopes.push(first === undefined ? (this.scopes.at(-1) ?? '') : `hl-${first}`);
  }

  endScope(): void {
    this.scopes.pop();
  }

  // highlight.js 11 also calls its tree builder's names for the same two steps.
  openNode(name: string): void {
    this.startScope(name);
  }

  closeNode(): void {
    this.endScope();
  }

  __addSublanguage(emitter: Emitter): void {
    for (const segment of (emitter as SegmentEmitter).segments) this.segments.push(segment.className === null ? { text: segment.text, className: this.scopes.at(-1) ?? null } : segment);
  }

  finalize(): void {}

  toHTML(): string {
    return '';
  }
}

hljs.configure({ __emitter: SegmentEmitter });
const LANGUAGES = { bash, css, diff, go, javascript, json, python, rust, sql, typescript, xml, yaml };
for (const [name, language] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, language);
hljs.registerAliases(['sh', 'shell', 'zsh', 'console'], { languageName: 'bash' });
hljs.registerAliases(['html', 'svg', 'xhtml'], { languageName: 'xml' });

/** File extensions of the registered languages, for the diff viewer. */
const EXTENSIONS: Readonly<Record<string, string>> = {
  sh: 'bash', bash: 'bash', css: 'css', diff: 'diff', patch: 'diff', go: 'go', js: 'javascript', mjs: 'javascript', cjs: 'javascript', jsx: 'javascript',
  json: 'json', py: 'python', rs: 'rust', sql: 'sql', ts: 'typescript', tsx: 'typescript', mts: 'typescript', cts: 'typescript',
  html: 'xml', htm: 'xml', xml: 'xml', svg: 'xml', yml: 'yaml', yaml: 'yaml',
};

/** The registered language a fence names (`ts`, `TypeScript`), else null (shown plain). */
export function knownLanguage(name: string): string | null {
  const language = hljs.getLanguage(name.toLowerCase());
  return language === undefined ? null : name.toLowerCase();
}

/** The language of a file by its extension, else null. */
export function languageOfPath(path: string): string | null {
  const extension = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase();
  return extension === undefined ? null : (EXTENSIONS[extension] ?? null);
}

function splitLines(segments: readonly Segment[]): Line[] {
  const lines: Segment[][] = [[]];
  for (const segment of segments) {
    const parts = segment.text.split('\n');
    parts.forEach((part, index) => {
      if (index > 0) lines.push([]);
      if (part === '') return;
      const line = lines.at(-1)!;
      const last = line.at(-1);
      // Neighbours of one class are one span: fewer elements for long files.
      if (last !== undefined && last.className === segment.className) line[line.length - 1] = { text: last.text + part, className: last.className };
      else line.push({ text: part, className: segment.className });
    });
  }
  return lines;
}

/** `code` as lines of segments; plain (one segment a line) for an unknown language or a failed parse. */
export function highlightLines(code: string, language: string | null): Line[] {
  if (language !== null && hljs.getLanguage(language) !== undefined) {
    try {
      const result = hljs.highlight(code, { language, ignoreIllegals: true });
      return splitLines((result._emitter as SegmentEmitter).segments);
    } catch {
      // A grammar that throws on odd input: the text is shown plain, never lost.
    }
  }
  return code.split('\n').map((line) => (line === '' ? [] : [{ text: line, className: null }]));
}
