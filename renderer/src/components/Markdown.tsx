/**
 * A small markdown subset rendered straight to React elements (U3). There is no HTML parsing
 * and no dangerouslySetInnerHTML anywhere: raw HTML in model output is shown as text, and
 * links are untrusted — only parsed http/https URLs become actions, which ask main to confirm
 * before opening the system browser. Everything else (javascript:, data:, relative) stays text.
 */
import { Fragment, type ReactNode } from 'react';

export type OpenLink = (url: string) => void;

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

function UntrustedLink({ text, target, onOpenLink }: { text: string; target: string; onOpenLink: OpenLink }) {
  const url = safeLinkTarget(target);
  if (url === null) {
    return (
      <span className="inert-link" title="Not a web link: Ward does not open it">
        {text}
      </span>
    );
  }
  return (
    <>
      <button type="button" className="untrusted-link" title={`Link from the model, opens in your browser after you confirm: ${url.href}`} onClick={() => onOpenLink(url.href)}>
        {text}
      </button>
      <span className="link-host"> ({url.host})</span>
    </>
  );
}

const INLINE = /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|(\*[^*\n]+\*|_[^_\n]+_)|(\[[^\]\n]*\]\([^)\s]*\))|(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"])/;

function renderInline(text: string, onOpenLink: OpenLink, keyPrefix: string): ReactNode[] {
  const out: ReactNode[] = [];
  let rest = text;
  let index = 0;
  while (rest.length > 0) {
    const match = INLINE.exec(rest);
    if (match === null) {
      out.push(rest);
      break;
    }
    if (match.index > 0) out.push(rest.slice(0, match.index));
    const token = match[0];
    const key = `${keyPrefix}.${index++}`;
    if (match[1] !== undefined) out.push(<code key={key}>{token.slice(1, -1)}</code>);
    else if (match[2] !== undefined) out.push(<strong key={key}>{renderInline(token.slice(2, -2), onOpenLink, key)}</strong>);
    else if (match[3] !== undefined) out.push(<em key={key}>{renderInline(token.slice(1, -1), onOpenLink, key)}</em>);
    else if (match[4] !== undefined) {
      const close = token.indexOf('](');
      out.push(<UntrustedLink key={key} text={token.slice(1, close) || token.slice(close + 2, -1)} target={token.slice(close + 2, -1)} onOpenLink={onOpenLink} />);
    } else out.push(<UntrustedLink key={key} text={token} target={token} onOpenLink={onOpenLink} />);
    rest = rest.slice(match.index + token.length);
  }
  return out;
}

type Block =
  | { kind: 'code'; text: string }
  | { kind: 'heading'; level: number; text: string }
  | { kind: 'list'; ordered: boolean; items: string[] }
  | { kind: 'quote'; text: string }
  | { kind: 'paragraph'; text: string };

export function parseBlocks(source: string): Block[] {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === '') {
      i++;
      continue;
    }
    if (line.startsWith('```')) {
      const body: string[] = [];
      i++;
      while (i < lines.length && !lines[i]!.startsWith('```')) body.push(lines[i++]!);
      i++;
      blocks.push({ kind: 'code', text: body.join('\n') });
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading !== null) {
      blocks.push({ kind: 'heading', level: heading[1]!.length, text: heading[2]! });
      i++;
      continue;
    }
    const listItem = /^\s*(?:([-*+])|(\d{1,9})[.)])\s+(.*)$/;
    const first = listItem.exec(line);
    if (first !== null) {
      const ordered = first[2] !== undefined;
      const items: string[] = [];
      while (i < lines.length) {
        const item = listItem.exec(lines[i]!);
        if (item === null || (item[2] !== undefined) !== ordered) break;
        items.push(item[3]!);
        i++;
      }
      blocks.push({ kind: 'list', ordered, items });
      continue;
    }
    if (line.startsWith('>')) {
      const body: string[] = [];
      while (i < lines.length && lines[i]!.startsWith('>')) body.push(lines[i++]!.replace(/^>\s?/, ''));
      blocks.push({ kind: 'quote', text: body.join('\n') });
      continue;
    }
    const body: string[] = [];
    while (i < lines.length && lines[i]!.trim() !== '' && !lines[i]!.startsWith('```') && !/^(#{1,6})\s/.test(lines[i]!) && !listItem.test(lines[i]!)) {
      body.push(lines[i++]!);
    }
    blocks.push({ kind: 'paragraph', text: body.join('\n') });
  }
  return blocks;
}

function withBreaks(text: string, onOpenLink: OpenLink, key: string): ReactNode[] {
  return text.split('\n').map((line, index) => (
    <Fragment key={`${key}.l${index}`}>
      {index > 0 && <br />}
      {renderInline(line, onOpenLink, `${key}.l${index}`)}
    </Fragment>
  ));
}

export function Markdown({ source, onOpenLink }: { source: string; onOpenLink: OpenLink }) {
  return (
    <div className="markdown">
      {parseBlocks(source).map((block, index) => {
        const key = `b${index}`;
        switch (block.kind) {
          case 'code':
            return (
              <pre key={key}>
                <code>{block.text}</code>
              </pre>
            );
          case 'heading': {
            const Tag = `h${Math.min(6, block.level + 2)}` as 'h3';
            return <Tag key={key}>{renderInline(block.text, onOpenLink, key)}</Tag>;
          }
          case 'list': {
            const Tag = block.ordered ? 'ol' : 'ul';
            return (
              <Tag key={key}>
                {block.items.map((item, itemIndex) => (
                  <li key={itemIndex}>{renderInline(item, onOpenLink, `${key}.${itemIndex}`)}</li>
                ))}
              </Tag>
            );
          }
          case 'quote':
            return <blockquote key={key}>{withBreaks(block.text, onOpenLink, key)}</blockquote>;
          case 'paragraph':
            return <p key={key}>{withBreaks(block.text, onOpenLink, key)}</p>;
        }
      })}
    </div>
  );
}
