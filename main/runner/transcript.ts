import fs from 'node:fs';
import path from 'node:path';

/**
 * Whether the CLI has persisted a native session: `<CLAUDE_CONFIG_DIR>/projects/<cwd key>/<id>.jsonl`
 * with content. Only a persisted session can be resumed; a first turn killed before the CLI
 * wrote it leaves nothing to resume, so the next turn starts the session again (R4).
 */
export function nativeTranscriptExists(configDir: string, sessionId: string): boolean {
  return transcriptFolder(configDir, sessionId) !== null;
}

/** The `projects/<cwd key>` folder holding the session's transcript, or null. */
function transcriptFolder(configDir: string, sessionId: string): string | null {
  const projects = path.join(configDir, 'projects');
  let folders: fs.Dirent[];
  try {
    folders = fs.readdirSync(projects, { withFileTypes: true });
  } catch {
    return null;
  }
  for (const folder of folders) {
    if (!folder.isDirectory()) continue;
    try {
      if (fs.statSync(path.join(projects, folder.name, `${sessionId}.jsonl`)).size > 0) return path.join(projects, folder.name);
    } catch {
      // not in this folder
    }
  }
  return null;
}

/**
 * Moves one session's transcript (and the CLI's per-session folder beside it, if any) from a
 * shared CLI state folder into the conversation's own, when it is only in the shared one.
 */
export function adoptTranscript(fromConfigDir: string, toConfigDir: string, sessionId: string): void {
  if (nativeTranscriptExists(toConfigDir, sessionId)) return;
  const from = transcriptFolder(fromConfigDir, sessionId);
  if (from === null) return;
  const to = path.join(toConfigDir, 'projects', path.basename(from));
  fs.mkdirSync(to, { recursive: true, mode: 0o700 });
  for (const name of [`${sessionId}.jsonl`, sessionId]) {
    if (fs.existsSync(path.join(from, name))) fs.renameSync(path.join(from, name), path.join(to, name));
  }
}

/** The CLI's transcripts are its own files: a bigger one is not read (a rewind then says so). */
const MAX_TRANSCRIPT_BYTES = 256 * 1024 * 1024;
const MESSAGE_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A user or assistant message of a session's transcript, in the order the CLI wrote them. */
export interface TranscriptMessage {
  readonly uuid: string;
  readonly role: 'user' | 'assistant';
  /** A person's prompt (a user message with text and no tool result), else null. */
  readonly prompt: string | null;
}

function promptOf(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content) || content.some((block) => (block as { type?: unknown })?.type === 'tool_result')) return null;
  const texts = content.flatMap((block) => ((block as { type?: unknown })?.type === 'text' && typeof (block as { text?: unknown }).text === 'string' ? [(block as { text: string }).text] : []));
  return texts.length === 0 ? null : texts.join('\n');
}

/**
 * The session's user and assistant messages (up to and including `until`, when given), read from
 * the CLI's transcript; lines Ward cannot read are skipped (the file is the CLI's, not Ward's).
 */
export function transcriptMessages(configDir: string, sessionId: string, until: string | null): TranscriptMessage[] {
  const folder = transcriptFolder(configDir, sessionId);
  if (folder === null) throw new Error(`the CLI has no transcript of session ${sessionId}`);
  const file = path.join(folder, `${sessionId}.jsonl`);
  if (fs.statSync(file).size > MAX_TRANSCRIPT_BYTES) throw new Error(`the CLI's transcript of session ${sessionId} is over ${MAX_TRANSCRIPT_BYTES / 1024 / 1024} MB`);
  const messages: TranscriptMessage[] = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    let entry: { type?: unknown; uuid?: unknown; isMeta?: unknown; isSidechain?: unknown; message?: { content?: unknown } };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue;
    }
    if ((entry.type !== 'user' && entry.type !== 'assistant') || typeof entry.uuid !== 'string' || !MESSAGE_UUID.test(entry.uuid) || entry.isSidechain === true) continue;
    const prompt = entry.type === 'user' && entry.isMeta !== true ? promptOf(entry.message?.content) : null;
    messages.push({ uuid: entry.uuid, role: entry.type, prompt });
    if (entry.uuid === until) break;
  }
  return messages;
}
