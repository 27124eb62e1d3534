/**
 * A writable root's state as Ward indexes it (./scan.ts): each path's journaled state and the stat
 * numbers that say, at the next scan, whether it can be kept without a read.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FileState } from '../../common/events.js';
import type { Stat } from './stat-workers.js';

export interface IndexEntry extends FileState {
  readonly mtimeMs: number;
  readonly ctimeMs: number;
  readonly ino: number;
}

/** Relative path (with `/`) → entry. */
export type TreeIndex = Record<string, IndexEntry>;

/** Whether a path is one of `paths` or inside one. */
export function under(paths: readonly string[], absolute: string): boolean {
  return paths.some((denied) => absolute === denied || absolute.startsWith(denied.endsWith(path.sep) ? denied : denied + path.sep));
}

/** A path's state as journaled: the index entry without its stat cache. */
export function stateOf(entry: IndexEntry): FileState {
  const { mtimeMs: _m, ctimeMs: _c, ino: _i, ...state } = entry;
  return state;
}

export const isFolder = (stat: Stat): boolean => (stat.mode & fs.constants.S_IFMT) === fs.constants.S_IFDIR;
export const isFile = (stat: Stat): boolean => (stat.mode & fs.constants.S_IFMT) === fs.constants.S_IFREG;
export const isLink = (stat: Stat): boolean => (stat.mode & fs.constants.S_IFMT) === fs.constants.S_IFLNK;

/** What a folder or file that is not read is recorded as: its stat and why. */
export function special(stat: Stat, reason: string): IndexEntry {
  return { kind: 'special', size: stat.size, mode: stat.mode, hash: null, stored: false, reason, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino };
}
