/**
 * S2: Ward's data folder (databases, settings, model profiles, other namespaces, CLI state) is
 * never the agent's, whatever anyone grants. A workspace or grant that would show it is refused
 * when it is given; every run's permissions also refuse any path in it but the run's own folders
 * (its workspace and CLI state), and the sandbox hides it even where a granted parent is shown.
 */
import fs from 'node:fs';
import path from 'node:path';
import { WardError } from '../base/errors.js';
import type { Rule } from '../permissions/grants.js';
import type { ProtectedPaths } from '../permissions/run-permissions.js';

function real(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

function within(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** What a run may not touch of Ward's data folder: all of it but its own folders, under both the given and the real path. */
export function wardDataProtection(home: string, ownFolders: readonly string[]): ProtectedPaths {
  return { hidden: [...new Set([path.resolve(home), real(home)])], except: [...new Set(ownFolders.flatMap((folder) => [path.resolve(folder), real(folder)]))] };
}

/** Refuses a folder that is, holds or lies inside Ward's data folder. */
export function assertOutsideWardData(home: string, what: string, folder: string): void {
  const data = real(home);
  const target = real(folder);
  if (within(data, target) || within(target, data)) {
    throw new WardError('invalid_grant', `${what} ${folder} ${within(target, data) ? 'is inside' : 'holds'} Ward's data folder ${data}, which an agent may never see; choose a folder that does not contain it`);
  }
}

/** Refuses read and write grants that would show Ward's data folder. */
export function assertGrantsOutsideWardData(home: string, rules: readonly Rule[]): void {
  for (const rule of rules) {
    if (rule.effect === 'allow' && (rule.kind === 'read' || rule.kind === 'write')) assertOutsideWardData(home, `a ${rule.kind} grant for`, rule.value);
  }
}
