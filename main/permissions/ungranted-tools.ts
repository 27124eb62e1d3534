/**
 * Native tools a run does not offer (P2: none without a grant), in words: the one line that
 * tells the person which grant would offer a tool the model asked for, and the note that tells
 * the model why a tool is missing, instead of the CLI's bare "No such tool available".
 */
import type { GrantKind } from './grants.js';
import { NATIVE_TOOLS } from './native-tools.js';

const GRANT_WORDS: Readonly<Partial<Record<GrantKind, { readonly doing: string; readonly flag: string }>>> = {
  read: { doing: 'reading files', flag: '--allow-read=PATH' },
  write: { doing: 'changing files', flag: '--allow-write=PATH' },
  run: { doing: 'running commands', flag: '--allow-run=COMMAND' },
  net: { doing: 'fetching web pages', flag: '--allow-net=HOST' },
};

/** The grant kind whose allow offers `tool` to the child, or null for a tool no grant offers. */
function kindOffering(tool: string): GrantKind | null {
  for (const [kind, tools] of Object.entries(NATIVE_TOOLS)) if (tools.includes(tool)) return kind as GrantKind;
  return null;
}

/** Why the run answered `tool` with an error, for the person: the grant that would offer it; null when no grant would. */
export function notOfferedReason(tool: string): string | null {
  const kind = kindOffering(tool);
  const words = kind === null ? undefined : GRANT_WORDS[kind];
  return words === undefined ? null : `not offered to this run: an allow ${kind} grant would offer it (${words.flag}, or Agents → Grant in the desktop)`;
}

/** For the model, after the agent's instructions: which native tools this run leaves out and how the person would add them. Null when it offers them all. */
export function ungrantedToolsNote(offered: readonly string[]): string | null {
  const missing = Object.entries(GRANT_WORDS)
    .map(([kind, words]) => ({ tools: (NATIVE_TOOLS[kind as GrantKind] ?? []).filter((tool) => !offered.includes(tool)), words: words! }))
    .filter((entry) => entry.tools.length > 0);
  if (missing.length === 0) return null;
  const list = missing.map(({ tools, words }) => `${tools.join(', ')} (${words.doing}; the person grants it with ${words.flag})`).join('; ');
  return [
    'Ward, the program running you, offers only the tools the person granted for this run.',
    `Not offered in this run: ${list}.`,
    'Calling one of them fails. If the task needs one, say which grant it needs and why, and let the person decide.',
  ].join(' ');
}
