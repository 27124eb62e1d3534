/**
 * A chat's one-line preview in the sessions list reads as text, not as the Markdown it was
 * written in: `## Plan **short**` shows as "Plan short". Formatting marks are dropped, the words
 * kept; escaping for the window is the caller's (escapeLineForWindow).
 */
const RULES: readonly (readonly [RegExp, string])[] = [
  [/^```.*$/gm, ''],
  [/^ {0,3}#{1,6}[ \t]+/gm, ''],
  [/^ {0,3}>[ \t]?/gm, ''],
  [/^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?/gm, ''],
  [/!\[([^\]\n]*)\]\([^)\n]*\)/g, '$1'],
  [/\[([^\]\n]+)\]\([^)\n]*\)/g, '$1'],
  [/(\*\*|__|~~)(?=\S)([^\n]*?\S)\1/g, '$2'],
  [/(^|[^\w*])\*(?=\S)([^*\n]*?\S)\*(?!\w)/g, '$1$2'],
  [/`+([^`\n]+?)`+/g, '$1'],
];

export function plainPreview(markdown: string): string {
  let text = markdown;
  for (const [pattern, replacement] of RULES) text = text.replace(pattern, replacement);
  return text.replace(/\s+/g, ' ').trim();
}
