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
