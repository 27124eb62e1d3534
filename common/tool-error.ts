/**
 * A failed tool call's reason as a sentence. The pinned CLI wraps its own errors in
 * `<tool_use_error>` tags and may append `<system-reminder>` blocks meant for the model; a person
 * reads the sentence inside. Shared by `ward` and the renderer: no Node, no Electron.
 */
const REMINDER = /<system-reminder>[\s\S]*?(?:<\/system-reminder>|$)/g;
const ERROR_TAGS = /<\/?tool_use_error>/g;

/** The reason in a tool result's preview, on one line, without the CLI's markup; empty when there is none. */
export function toolErrorSentence(preview: string): string {
  return preview.replace(REMINDER, ' ').replace(ERROR_TAGS, ' ').replace(/\s+/g, ' ').trim().replace(/^Error: /, '');
}
