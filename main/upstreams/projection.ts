/**
 * B5: what of a tool result reaches the child, and how it is measured. Text, images, links to
 * resources (passed on as links; Ward fetches nothing) and a structured result (a JSON object,
 * with the tool's pinned output schema); the byte count is what the 1 MiB cap applies to.
 */
import type { CallToolResult } from '@modelcontextprotocol/client';
import type { ResourceLink, StructuredContent, ToolContent } from './types.js';

const LINK_TEXT_FIELDS = ['title', 'description', 'mimeType'] as const;

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A resource link with its string fields only, or null when uri or name is missing. */
export function resourceLinkOf(item: unknown): ResourceLink | null {
  if (!isPlainObject(item) || typeof item.uri !== 'string' || typeof item.name !== 'string') return null;
  const link: { -readonly [K in keyof ResourceLink]: ResourceLink[K] } = { type: 'resource_link', uri: item.uri, name: item.name };
  for (const field of LINK_TEXT_FIELDS) if (typeof item[field] === 'string') link[field] = item[field];
  return link;
}

/** A structured result as the child may get it: a JSON object, else null. */
export function structuredOf(value: unknown): StructuredContent | null {
  return isPlainObject(value) ? value : null;
}

export function contentBytes(item: ToolContent): number {
  if (item.type === 'text') return Buffer.byteLength(item.text, 'utf8');
  if (item.type === 'image') return item.data.length + item.mimeType.length;
  return Buffer.byteLength(JSON.stringify(item), 'utf8');
}

export function structuredBytes(value: StructuredContent | undefined): number {
  return value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value), 'utf8');
}

/** MCP content → text, images, resource links and a structured result, measured in bytes (B5). */
export function projectResult(result: CallToolResult): { content: ToolContent[]; structuredContent?: StructuredContent; bytes: number } {
  const content: ToolContent[] = [];
  for (const item of result.content ?? []) {
    if (item.type === 'text') content.push({ type: 'text', text: item.text });
    else if (item.type === 'image') content.push({ type: 'image', data: item.data, mimeType: item.mimeType });
    else if (item.type === 'resource' && 'text' in item.resource) content.push({ type: 'text', text: item.resource.text });
    else if (item.type === 'resource_link') content.push(resourceLinkOf(item) ?? { type: 'text', text: '[malformed resource link omitted]' });
    else content.push({ type: 'text', text: `[${item.type} content omitted]` });
  }
  const structured = structuredOf(result.structuredContent) ?? undefined;
  // The spec asks servers to repeat a structured result as text; for one that did not, the child still gets it as text.
  if (content.length === 0 && structured !== undefined) content.push({ type: 'text', text: JSON.stringify(structured) });
  const bytes = content.reduce((sum, item) => sum + contentBytes(item), structuredBytes(structured));
  return { content, ...(structured === undefined ? {} : { structuredContent: structured }), bytes };
}
