/**
 * A file change as a unified diff (jsdiff), for `ward changes --diff` and the transcripts. Only
 * bytes Ward kept are shown: a deny-read file (X1), one over the size cap, a binary file, a link
 * or a special file is named with its sizes and hashes instead.
 */
import { createTwoFilesPatch } from 'diff';
import type { FileChange, FileState } from '../../common/events.js';
import type { BlobStore } from '../changes/blobs.js';

/** Bigger texts are summarized rather than diffed (the diff is for reading). */
const MAX_DIFF_BYTES = 2 * 1024 * 1024;

function describe(state: FileState | null): string {
  if (state === null) return 'absent';
  const mode = (state.mode & 0o7777).toString(8).padStart(4, '0');
  if (state.kind === 'link') return `symlink to ${state.target ?? '?'}`;
  const hash = state.hash === null ? 'no hash' : `sha256 ${state.hash.slice(0, 16)}`;
  return `${state.kind}, ${state.size} bytes, mode ${mode}, ${hash}${state.reason === undefined ? '' : ` (${state.reason})`}`;
}

/** The text of a kept, text-looking state ('' for an absent one); null when it is not shown. */
export function textOf(blobs: BlobStore, state: FileState | null): string | null {
  if (state === null) return '';
  if (state.kind !== 'file' || !state.stored || state.hash === null || state.size > MAX_DIFF_BYTES || !blobs.has(state.hash)) return null;
  const bytes = blobs.read(state.hash);
  if (bytes.subarray(0, 8000).includes(0)) return null;
  return bytes.toString('utf8');
}

/** A change's diff in parts: its header line, the patch (null when the bytes are not shown) or why not. */
export interface ChangeDiff {
  readonly header: string;
  /** jsdiff's two-file patch (`---`/`+++` lines, then hunks); '' when both sides are the same text. */
  readonly patch: string | null;
  /** Why the content is not shown (deny-read, over the size cap, binary, a link). */
  readonly notShown: string | null;
}

/** "modified: file, 12 bytes, mode 0644, sha256 … -> …": both sides' kinds, sizes, modes and hashes. */
export function changeHeader(change: FileChange): string {
  return `${change.change}: ${describe(change.before)} -> ${describe(change.after)}`;
}

export function changeDiff(blobs: BlobStore, change: FileChange): ChangeDiff {
  const oldName = change.before === null ? '/dev/null' : `a/${change.from ?? change.path}`;
  const newName = change.after === null ? '/dev/null' : `b/${change.path}`;
  const header = changeHeader(change);
  const before = textOf(blobs, change.before);
  const after = textOf(blobs, change.after);
  if (before === null || after === null) {
    const notShown = [change.before, change.after].find((state) => state !== null && textOf(blobs, state) === null)?.reason ?? 'binary, link or special file';
    return { header, patch: null, notShown };
  }
  if (before === after) return { header, patch: '', notShown: null };
  return { header, patch: createTwoFilesPatch(oldName, newName, before, after, undefined, undefined, { context: 3 }), notShown: null };
}

export function unifiedDiff(blobs: BlobStore, change: FileChange): string {
  const { header, patch, notShown } = changeDiff(blobs, change);
  return patch === null ? `${header}\n(content not shown: ${notShown})\n` : `${header}\n${patch}`;
}
