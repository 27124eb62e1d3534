/** What a bundle holds (E1): its files, their bounds, and the bounds on reading and writing one. */
import type { TarLayout } from './tar.js';
import { EVENT_HASHES_FILE, JOURNAL_FILE } from './statement.js';

export const BUNDLE_EXTENSION = '.wardbundle';
export const MAX_BUNDLE_BYTES = 1024 ** 3;
export const MAX_BUNDLE_EVENTS = 10_000_000;
export const STATEMENT_FILE = 'statement.dsse.json';
export const KEY_FILE = 'signer.pub.pem';
export const README_FILE = 'README.txt';
export const MAX_KEY_BYTES = 16 * 1024;
/** The files in the order a bundle holds them; events.sha256 is absent from bundles older Wards made. */
export const LAYOUT: TarLayout = {
  files: {
    [JOURNAL_FILE]: { maxBytes: MAX_BUNDLE_BYTES, required: true },
    [EVENT_HASHES_FILE]: { maxBytes: MAX_BUNDLE_BYTES, required: false },
    [STATEMENT_FILE]: { maxBytes: 1024 * 1024, required: true },
    [KEY_FILE]: { maxBytes: MAX_KEY_BYTES, required: true },
    [README_FILE]: { maxBytes: 64 * 1024, required: true },
  },
};
/** Written, and read, in chunks of about this size. */
export const WRITE_CHUNK = 1024 * 1024;

/** A path that names nothing (ENOTDIR: a part of it is a file, so nothing is there either). */
export function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
