import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { adoptTranscript, nativeTranscriptExists } from '../../main/runner/transcript.js';
import { tempDir } from '../support/temp.js';

const SESSION = '6f1c2a8e-0d4b-4c55-9a1e-3b7f2d9c8e10';

function writeTranscript(configDir: string, text: string): string {
  const folder = path.join(configDir, 'projects', '-tmp-workspace');
  fs.mkdirSync(path.join(folder, SESSION), { recursive: true });
  fs.writeFileSync(path.join(folder, `${SESSION}.jsonl`), text);
  fs.writeFileSync(path.join(folder, SESSION, 'tool-result.txt'), 'beside');
  return folder;
}

describe('a conversation keeps its CLI transcript in its own folder (issue 12 #3)', () => {
  it('test_a_transcript_left_in_the_namespaces_shared_folder_moves_to_the_conversations_own_and_resumes_there', () => {
    const root = tempDir('ward-transcript-');
    const shared = path.join(root, 'claude');
    const own = path.join(root, 'conversations', 'c1', 'claude');
    writeTranscript(shared, '{"type":"user"}\n');
    expect(nativeTranscriptExists(own, SESSION)).toBe(false);

    adoptTranscript(shared, own, SESSION);
    expect(nativeTranscriptExists(own, SESSION)).toBe(true);
    expect(nativeTranscriptExists(shared, SESSION)).toBe(false);
    expect(fs.readFileSync(path.join(own, 'projects', '-tmp-workspace', SESSION, 'tool-result.txt'), 'utf8')).toBe('beside');
  });

  it('test_a_transcript_already_in_the_conversations_folder_is_kept_and_the_shared_copy_left_alone', () => {
    const root = tempDir('ward-transcript-');
    const shared = path.join(root, 'claude');
    const own = path.join(root, 'own');
    writeTranscript(shared, 'old\n');
    const mine = writeTranscript(own, 'newer\n');
    adoptTranscript(shared, own, SESSION);
    expect(fs.readFileSync(path.join(mine, `${SESSION}.jsonl`), 'utf8')).toBe('newer\n');
    expect(nativeTranscriptExists(shared, SESSION)).toBe(true);
  });

  it('test_an_empty_transcript_does_not_count_as_a_session_to_resume', () => {
    const root = tempDir('ward-transcript-');
    writeTranscript(root, '');
    expect(nativeTranscriptExists(root, SESSION)).toBe(false);
  });
});
