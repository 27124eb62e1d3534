/**
 * Policy files (Linux: /etc/ward/policy.json and /etc/ward/policy.d/*.json; everywhere: the file
 * WARD_POLICY names) and macOS managed preferences (plists MDM writes to /Library/Managed
 * Preferences). A system file must be a regular file (no symlink), owned by root and writable
 * by no one else, in folders that are the same: otherwise anyone could loosen or remove it.
 *
 * A document is an object of mandatory keys, plus an optional "recommended" object of defaults
 * the user may change; JSON files may carry "version": 1 and "$schema".
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { describeError } from '../base/errors.js';
import { parsePolicyJson } from './json-text.js';
import type { BrokenSource, PolicyDocument } from './merge.js';

/** A policy bigger than this is not a policy someone wrote by hand: refuse it. */
const MAX_POLICY_BYTES = 1024 * 1024;
/** policy.d holds a few files per concern, not thousands. */
const MAX_DROP_IN_FILES = 100;

export interface FileRules {
  /** System files: owned by root (uid 0), as are their folders. */
  readonly rootOwned: boolean;
  readonly platform: NodeJS.Platform;
}

export type Loaded = { readonly document: PolicyDocument } | { readonly broken: BrokenSource } | null;

/** Why a system path may not be trusted, or null. Folders are checked by the caller. */
function unsafe(stat: fs.Stats, rules: FileRules): string | null {
  if (rules.platform === 'win32') return null;
  // The user must not be able to loosen what the admin set.
  if ((stat.mode & 0o022) !== 0) return `is writable by group or others (mode ${(stat.mode & 0o777).toString(8)})`;
  if (rules.rootOwned && stat.uid !== 0) return `is not owned by root (uid ${stat.uid})`;
  return null;
}

/** A system folder of policy files: absent is fine; otherwise a real folder only root can change. */
export function folderProblem(dir: string, rules: FileRules): string | null {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(dir);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? null : `cannot be read (${describeError(error)})`;
  }
  if (stat.isSymbolicLink()) return 'is a symbolic link; policy folders must be real folders';
  if (!stat.isDirectory()) return 'is not a folder';
  return unsafe(stat, rules);
}

function readChecked(file: string, rules: FileRules, mustExist: boolean): { bytes: Buffer } | { problem: string } | null {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !mustExist) return null;
    return { problem: `cannot be read (${describeError(error)})` };
  }
  if (stat.isSymbolicLink() && rules.rootOwned) return { problem: 'is a symbolic link; an admin policy must be a regular file' };
  if (stat.isSymbolicLink()) stat = fs.statSync(file);
  if (!stat.isFile()) return { problem: 'is not a regular file' };
  if (stat.size > MAX_POLICY_BYTES) return { problem: `is larger than ${MAX_POLICY_BYTES} bytes` };
  const problem = unsafe(stat, rules);
  if (problem !== null) return { problem };
  try {
    return { bytes: fs.readFileSync(file) };
  } catch (error) {
    return { problem: `cannot be read (${describeError(error)})` };
  }
}

/** Splits a parsed document into its levels; a document that is not a dictionary is broken. */
export function toDocument(source: string, parsed: unknown, allowFileFields: boolean): PolicyDocument | string {
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return 'must hold a dictionary of policy keys';
  const { recommended = {}, ...mandatory } = parsed as Record<string, unknown>;
  if (recommended === null || typeof recommended !== 'object' || Array.isArray(recommended)) return '"recommended" must be a dictionary of policy keys';
  if (allowFileFields) {
    if (mandatory.version !== undefined && mandatory.version !== 1) return `"version" must be 1 (got ${JSON.stringify(mandatory.version)})`;
    delete mandatory.version;
    delete mandatory.$schema;
  }
  return { source, mandatory, recommended: recommended as Record<string, unknown> };
}

function loaded(source: string, result: PolicyDocument | string): Loaded {
  return typeof result === 'string' ? { broken: { source, problem: result } } : { document: result };
}

export function readJsonPolicy(file: string, rules: FileRules, mustExist: boolean): Loaded {
  const read = readChecked(file, rules, mustExist);
  if (read === null) return null;
  if ('problem' in read) return { broken: { source: file, problem: read.problem } };
  let parsed: unknown;
  try {
    parsed = parsePolicyJson(read.bytes.toString('utf8'));
  } catch (error) {
    return { broken: { source: file, problem: describeError(error) } };
  }
  return loaded(file, toDocument(file, parsed, true));
}

type Plist = typeof import('plist');
let plist: Plist | undefined;

/**
 * The plist parser (with the XML parser and builder it needs: ~25 ms to load) loads the first
 * time a property list is read, so no Linux or Windows command pays for it (issue 19). It is
 * an ES module; Node ≥ 20.19 loads one synchronously with require().
 */
function parsePlist(input: Parameters<Plist['parse']>[0]): unknown {
  // By its file: the package exports an `import` entry only, which require() would not pick.
  plist ??= createRequire(import.meta.url)(fileURLToPath(import.meta.resolve('plist'))) as Plist;
  return plist.parse(input);
}

/** A property list's value, binary (what MDM writes) or XML. */
export function parsePlistBytes(bytes: Buffer): unknown {
  return parsePlist(bytes.subarray(0, 6).toString('latin1') === 'bplist' ? new Uint8Array(bytes) : bytes.toString('utf8'));
}

/** A managed-preferences plist, XML or binary (what MDM writes). */
export function readPlistPolicy(file: string, rules: FileRules): Loaded {
  const read = readChecked(file, rules, false);
  if (read === null) return null;
  if ('problem' in read) return { broken: { source: file, problem: read.problem } };
  let parsed: unknown;
  try {
    parsed = parsePlistBytes(read.bytes);
  } catch (error) {
    return { broken: { source: file, problem: `is not a valid property list (${describeError(error)})` } };
  }
  return loaded(file, toDocument(file, parsed, false));
}

/** /etc/ward/policy.json, then policy.d/*.json in name order. */
export function readPolicyFolder(file: string, dir: string, rules: FileRules): Loaded[] {
  const results: Loaded[] = [];
  for (const folder of new Set([path.dirname(file), dir])) {
    const problem = folderProblem(folder, rules);
    if (problem !== null) return [{ broken: { source: folder, problem } }];
  }
  results.push(readJsonPolicy(file, rules, false));
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir).filter((name) => name.endsWith('.json')).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return [...results, { broken: { source: dir, problem: `cannot be listed (${describeError(error)})` } }];
  }
  if (names.length > MAX_DROP_IN_FILES) return [...results, { broken: { source: dir, problem: `holds more than ${MAX_DROP_IN_FILES} policy files` } }];
  for (const name of names) results.push(readJsonPolicy(path.join(dir, name), rules, true));
  return results;
}
