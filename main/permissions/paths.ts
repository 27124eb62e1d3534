import fs from 'node:fs';
import path from 'node:path';
import { WardError } from '../base/errors.js';

/** Symlink chains longer than this are refused, as the OS refuses them (ELOOP). */
const MAX_LINK_HOPS = 40;

function isMissing(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * Resolves a path the way the OS will when it is opened: segment by segment, following every
 * symlink that exists (dangling ones too, since a write through them lands at their target),
 * applying `..` to the already-resolved parent, and keeping the not-yet-existing rest as is.
 * Lexical normalization first would be wrong: `link/..` is the parent of the link's target.
 */
export function resolveReal(target: string, hops = { left: MAX_LINK_HOPS }): string {
  if (!path.isAbsolute(target)) throw new WardError('internal', `resolveReal needs an absolute path, got ${JSON.stringify(target.slice(0, 200))}`);
  const { root } = path.parse(target);
  const segments = target.slice(root.length).split(/[\\/]+/);
  let current = root;
  let existing = true;
  for (const segment of segments) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      current = path.dirname(current);
      continue;
    }
    const next = path.join(current, segment);
    if (!existing) {
      current = next;
      continue;
    }
    try {
      current = fs.realpathSync.native(next);
    } catch (error) {
      if (!isMissing(error)) throw error;
      // Whatever follows a missing segment (or a dangling link's missing target) cannot exist yet.
      current = followDangling(next, hops) ?? next;
      existing = false;
    }
  }
  return current;
}

/** The resolved target of a dangling symlink at `link`, or undefined when nothing is there. */
function followDangling(link: string, hops: { left: number }): string | undefined {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(link);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
  if (!stat.isSymbolicLink()) return undefined;
  hops.left -= 1;
  if (hops.left < 0) throw Object.assign(new Error(`too many levels of symbolic links at ${link}`), { code: 'ELOOP' });
  const destination = joinUnresolved(path.dirname(link), fs.readlinkSync(link));
  return resolveReal(destination, hops);
}

/**
 * Joins without lexical normalization: `path.join('/a', 'link/../x')` drops the symlink's
 * `..` before the OS would follow it, so every tool and grant path goes through this instead.
 */
export function joinUnresolved(base: string, relative: string): string {
  if (path.isAbsolute(relative)) return relative;
  return base.endsWith('/') || base.endsWith(path.sep) ? base + relative : base + path.sep + relative;
}

/** True when `candidate` is `dir` itself or lies below it (both already resolved). */
export function isWithin(dir: string, candidate: string): boolean {
  if (candidate === dir) return true;
  const prefix = dir.endsWith(path.sep) ? dir : dir + path.sep;
  return candidate.startsWith(prefix);
}
