import fs from 'node:fs';
import path from 'node:path';

/**
 * Whether the CLI has persisted a native session: `<CLAUDE_CONFIG_DIR>/projects/<cwd key>/<id>.jsonl`
 * with content. Only a persisted session can be resumed; a first turn killed before the CLI
 * wrote it leaves nothing to resume, so the next turn starts the session again (R4).
 */
export function nativeTranscriptExists(configDir: string, sessionId: string): boolean {
  const projects = path.join(configDir, 'projects');
  let folders: fs.Dirent[];
  try {
    folders = fs.readdirSync(projects, { withFileTypes: true });
  } catch {
    return false;
  }
  return folders.some((folder) => {
    if (!folder.isDirectory()) return false;
    try {
      return fs.statSync(path.join(projects, folder.name, `${sessionId}.jsonl`)).size > 0;
    } catch {
      return false;
    }
  });
}
