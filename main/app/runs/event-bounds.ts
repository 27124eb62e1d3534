/** Size bounds for what a turn journals: the model got everything, the journal keeps a bounded view. */
import type { PayloadOf } from '../../../common/events.js';

/** Longest assistant text (and streamed block) one event holds. */
export const MAX_TEXT_EVENT_CHARS = 256 * 1024;
/** Tool arguments above this are journaled as their size only. */
const MAX_ARGUMENT_EVENT_BYTES = 64 * 1024;
/** How much of a tool's result the timeline shows. */
export const TOOL_RESULT_PREVIEW_BYTES = 2 * 1024;

export function truncateText(text: string): string {
  return text.length > MAX_TEXT_EVENT_CHARS ? `${text.slice(0, MAX_TEXT_EVENT_CHARS)}… [truncated ${text.length - MAX_TEXT_EVENT_CHARS} characters]` : text;
}

/** The start of a tool's result for the timeline, cut at a character boundary; shown as inert text. */
export function resultPreview(text: string): { preview: string; previewTruncated: boolean } {
  if (Buffer.byteLength(text) <= TOOL_RESULT_PREVIEW_BYTES) return { preview: text, previewTruncated: false };
  const cut = Buffer.from(text).subarray(0, TOOL_RESULT_PREVIEW_BYTES).toString('utf8');
  return { preview: cut.endsWith('\ufffd') ? cut.slice(0, -1) : cut, previewTruncated: true };
}

export function boundedArguments(input: unknown, redact: (text: string) => string): PayloadOf<'tool_call'>['arguments'] {
  const json = redact(JSON.stringify(input ?? null));
  if (Buffer.byteLength(json) > MAX_ARGUMENT_EVENT_BYTES) return { truncated: true, bytes: Buffer.byteLength(json) };
  return JSON.parse(json) as PayloadOf<'tool_call'>['arguments'];
}

export function firstLine(text: string): string | null {
  const line = text.split('\n').find((candidate) => candidate.trim() !== '');
  return line === undefined ? null : line.trim().slice(0, 300);
}
