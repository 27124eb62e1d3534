/**
 * Markdown from the model, rendered to React elements (U3). markdown-it tokenizes with HTML off
 * (raw HTML stays text) and its tokens become elements here; nothing is ever HTML: there is no
 * dangerouslySetInnerHTML anywhere. Links are untrusted: only parsed http/https URLs no longer
 * than main opens become actions, which ask main to confirm before the system browser opens;
 * everything else (javascript:, data:, relative, too long) stays text that says why.
 * Every text token passes the window escaper again: entities (`&#x202E;`) decode to characters.
 * Parsed token trees are kept for recently shown texts, so a row scrolled back costs no parse.
 */
import MarkdownIt from 'markdown-it';
import type { Token } from 'markdown-it';
import { memo, type ReactNode } from 'react';
import { MAX_LINK_CHARS } from '../../../preload/contract.js';
import { escapeForWindow } from '../../../common/display.js';
import { HighlightedCode } from './CodeLines.js';
import { CopyButton } from './CopyButton.js';

export type OpenLink = (url: string) => void;

const md = new MarkdownIt('default', { html: false, linkify: true, breaks: true, typographer: false });
// Every link becomes a token, so the renderer (not the tokenizer) decides what is offered.
md.validateLink = () => true;

/** The URL if it is an absolute http(s) URL, else null. */
export function safeLinkTarget(raw: string): URL | null {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return null;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : null;
}

function UntrustedLink({ target, onOpenLink, children }: { target: string; onOpenLink: OpenLink; children: ReactNode }) {
  const url = safeLinkTarget(target);
  if (url === null || url.href.length > MAX_LINK_CHARS) {
    const why = url === null ? 'Not a web link: Ward does not open it' : `This link is too long to open (${url.href.length} characters; Ward opens up to ${MAX_LINK_CHARS})`;
    return (
      <span className="inert-link" title={why}>
        {children}
      </span>
    );
  }
  return (
    <>
      <button type="button" className="untrusted-link" title={`Link from the model, opens in your browser after you confirm: ${escapeForWindow(url.href)}`} onClick={() => onOpenLink(url.href)}>
        {children}
      </button>
      <span className="link-host"> ({escapeForWindow(url.host)})</span>
    </>
  );
}

/** Parsed trees of recently shown texts (virtualized rows mount and unmount as the person scrolls). */
const CACHE_SIZE = 400;
const cache = new Map<string, Token[]>();
function tokensOf(source: string): Token[] {
  const hit = cache.get(source);
  if (hit !== undefined) {
    cache.delete(source);
    cache.set(source, hit);
    return hit;
  }
  const tokens = md.parse(source, {});
  cache.set(source, tokens);
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
  return tokens;
}

/** The tokens between an opening token at `start` and its matching close: [children, index after the close]. */
function until(tokens: readonly Token[], start: number): [Token[], number] {
  let depth = 0;
  for (let index = start; index < tokens.length; index++) {
    depth += tokens[index]!.nesting;
    if (depth === 0) return [tokens.slice(start + 1, index), index + 1];
  }
  return [tokens.slice(start + 1), tokens.length];
}

const BLOCK_TAGS = new Set(['p', 'blockquote', 'ul', 'ol', 'li', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'strong', 'em', 's']);

function renderTokens(tokens: readonly Token[], onOpenLink: OpenLink, keyPrefix: string): ReactNode[] {
  const out: ReactNode[] = [];
  let index = 0;
  while (index < tokens.length) {
    const token = tokens[index]!;
    const key = `${keyPrefix}.${index}`;
    if (token.nesting === 1) {
      const [inner, next] = until(tokens, index);
      out.push(...renderContainer(token, renderTokens(inner, onOpenLink, key), key, onOpenLink));
      index = next;
    } else {
      out.push(...renderLeaf(token, key, onOpenLink));
      index++;
    }
  }
  return out;
}

/** An opening token with its rendered children: a link, heading, list, table cell or other block. */
function renderContainer(token: Token, children: ReactNode[], key: string, onOpenLink: OpenLink): ReactNode[] {
  if (token.type === 'link_open') {
    return [
      <UntrustedLink key={key} target={String(token.attrGet('href') ?? '')} onOpenLink={onOpenLink}>
        {children}
      </UntrustedLink>,
    ];
  }
  if (/^h[1-6]$/.test(token.tag)) {
    // The page's own headings come first: the model's start at level 3.
    const Tag = `h${Math.min(6, Number(token.tag[1]) + 2)}` as 'h3';
    return [<Tag key={key}>{children}</Tag>];
  }
  if (token.tag === 'ol') {
    const start = Number(token.attrGet('start') ?? 1);
    return [
      <ol key={key} start={Number.isFinite(start) ? start : 1}>
        {children}
      </ol>,
    ];
  }
  if (token.tag === 'th' || token.tag === 'td') {
    const align = /text-align:(left|right|center)/.exec(String(token.attrGet('style') ?? ''))?.[1] as 'left' | 'right' | 'center' | undefined;
    const Tag = token.tag;
    return [
      <Tag key={key} className={align === undefined ? undefined : `align-${align}`}>
        {children}
      </Tag>,
    ];
  }
  if (token.tag === 'table') {
    return [
      <div key={key} className="table-scroll">
        <table>{children}</table>
      </div>,
    ];
  }
  if (BLOCK_TAGS.has(token.tag)) {
    const Tag = token.tag as 'p';
    // A tight list's paragraphs are hidden by markdown-it: their text stands in the item.
    return [token.hidden ? children : <Tag key={key}>{children}</Tag>];
  }
  return children;
}

/** A token without children: text, code, a break, a rule, an image's alt text, escaped HTML. */
function renderLeaf(token: Token, key: string, onOpenLink: OpenLink): ReactNode[] {
  switch (token.type) {
    case 'inline':
      return renderTokens(token.children ?? [], onOpenLink, key);
    case 'text':
      return [escapeForWindow(token.content)];
    case 'code_inline':
      return [<code key={key}>{escapeForWindow(token.content)}</code>];
    case 'softbreak':
    case 'hardbreak':
      return [<br key={key} />];
    case 'fence':
    case 'code_block': {
      const code = escapeForWindow(token.content.replace(/\n$/, ''));
      const language = escapeForWindow(token.info.trim().split(/\s+/)[0] ?? '').slice(0, 40);
      return [
        <div key={key} className="code-block">
          <div className="code-block-bar">
            <span className="code-language">{language || 'text'}</span>
            <CopyButton text={code} label="Copy code" />
          </div>
          <pre>
            <HighlightedCode code={code} language={language} />
          </pre>
        </div>,
      ];
    }
    case 'hr':
      return [<hr key={key} />];
    case 'image':
      // Nothing is loaded: the alt text stands in, marked as an image.
      return [<span key={key} className="inert-link" title="Images from the model are not loaded">{`[image: ${escapeForWindow(token.content)}]`}</span>];
    case 'html_block':
    case 'html_inline':
      return [escapeForWindow(token.content)];
    default:
      return token.content === '' ? [] : [escapeForWindow(token.content)];
  }
}

/** Texts longer than this are parsed in pieces, so a long answer streaming in re-parses only its end. */
const PIECES_FROM = 16_000;
const PIECE_CHARS = 8_000;

/** Where the last long text was cut: a text that grew from it (an answer streaming in) is only scanned from its last cut. */
let lastCuts: { readonly source: string; readonly cuts: readonly number[] } = { source: '', cuts: [] };

const FENCE = /[ ]{0,3}(`{3,}|~{3,})/y;
const BLANK = /[ \t]*(?:\n|$)/y;

/**
 * Cuts a long text at blank lines outside code fences into pieces of about PIECE_CHARS. The cut is
 * greedy from the start, so text appended later changes only the last piece.
 */
export function markdownPieces(source: string): string[] {
  if (source.length <= PIECES_FROM) return [source];
  const kept = lastCuts.cuts.length > 0 && source.startsWith(lastCuts.source.slice(0, lastCuts.cuts.at(-1))) ? [...lastCuts.cuts] : [];
  let start = kept.at(-1) ?? 0;
  let fence: string | null = null;
  let lineStart = start;
  while (lineStart < source.length) {
    let lineEnd = source.indexOf('\n', lineStart);
    if (lineEnd < 0) lineEnd = source.length;
    FENCE.lastIndex = lineStart;
    const marker = FENCE.exec(source)?.[1];
    BLANK.lastIndex = lineStart;
    if (marker !== undefined && (fence === null || marker.startsWith(fence))) fence = fence === null ? marker : null;
    else if (fence === null && lineStart - start >= PIECE_CHARS && BLANK.test(source)) {
      start = lineEnd + 1;
      kept.push(start);
    }
    lineStart = lineEnd + 1;
  }
  lastCuts = { source, cuts: kept };
  const pieces: string[] = [];
  let from = 0;
  for (const cut of kept) {
    pieces.push(source.slice(from, cut));
    from = cut;
  }
  if (from < source.length) pieces.push(source.slice(from));
  return pieces;
}

/** One piece of a long text; off screen, the browser skips its layout and paint (content-visibility). */
const Piece = memo(function Piece({ source, onOpenLink, index }: { source: string; onOpenLink: OpenLink; index: number }) {
  return <div className="markdown-piece">{renderTokens(tokensOf(source), onOpenLink, `m${index}`)}</div>;
});

function MarkdownView({ source, onOpenLink }: { source: string; onOpenLink: OpenLink }) {
  const pieces = markdownPieces(source);
  if (pieces.length === 1) return <div className="markdown">{renderTokens(tokensOf(source), onOpenLink, 'm')}</div>;
  return (
    <div className="markdown">
      {pieces.map((piece, index) => (
        <Piece key={index} index={index} source={piece} onOpenLink={onOpenLink} />
      ))}
    </div>
  );
}

/** Re-renders only when its text (or the link handler) changes. */
export const Markdown = memo(MarkdownView);
