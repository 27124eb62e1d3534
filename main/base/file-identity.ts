import type fs from 'node:fs';

/**
 * What tells one version of a file from another without reading it: size, modification and
 * change times, and inode. A rewrite in place changes the times; a replacement changes the
 * inode; ctime cannot be set back by the file's owner, so a restored mtime does not hide a change.
 */
export interface FileIdentity {
  readonly size: number;
  readonly mtimeMs: number;
  readonly ino: number;
  readonly ctimeMs: number;
}

export function fileIdentity(stat: fs.Stats): FileIdentity {
  return { size: stat.size, mtimeMs: stat.mtimeMs, ino: stat.ino, ctimeMs: stat.ctimeMs };
}

export function sameFileIdentity(a: FileIdentity, b: FileIdentity): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino && a.ctimeMs === b.ctimeMs;
}
