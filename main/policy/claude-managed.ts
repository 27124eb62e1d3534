/**
 * Claude Code's own managed settings on this machine. The child CLI loads them whatever
 * `--setting-sources` says (they are the organization's), so `ward doctor` lists them: they may
 * change what the child does (permission rules, environment, MCP servers) beside Ward's policy.
 * Locations as the pinned CLI (2.1.328) reads them, plus the MDM stores Anthropic documents.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { DoctorCheck, DoctorProbe } from '../base/doctor-check.js';
import { describeError } from '../base/errors.js';
import { parsePlistBytes } from './file-store.js';
import { osUserName } from './policy.js';
import { runRegQuery, parseRegQuery, type RegQuery } from './registry-store.js';

const MAX_BYTES = 1024 * 1024;
const MAX_DROP_INS = 100;

export interface ClaudeManagedLocations {
  /** The folder of managed-settings.json, managed-settings.d/ and managed-mcp.json. */
  readonly dirs: readonly string[];
  readonly plists?: readonly string[];
  readonly registryKeys?: readonly string[];
  readonly regQuery?: RegQuery;
}

export function claudeManagedLocations(platform: NodeJS.Platform = process.platform, user = osUserName()): ClaudeManagedLocations {
  switch (platform) {
    case 'darwin':
      return {
        dirs: ['/Library/Application Support/ClaudeCode'],
        plists: ['/Library/Managed Preferences/com.anthropic.claudecode.plist', ...(user === '' ? [] : [`/Library/Managed Preferences/${user}/com.anthropic.claudecode.plist`])],
      };
    case 'win32':
      // C:\ProgramData\ClaudeCode is where CLI versions before the Program Files move looked.
      return { dirs: ['C:\\Program Files\\ClaudeCode', 'C:\\ProgramData\\ClaudeCode'], registryKeys: ['HKEY_LOCAL_MACHINE\\SOFTWARE\\Policies\\ClaudeCode', 'HKEY_CURRENT_USER\\SOFTWARE\\Policies\\ClaudeCode'], regQuery: runRegQuery };
    default:
      return { dirs: ['/etc/claude-code'] };
  }
}

/** One found source: where, and its top-level keys (never values: they may hold helpers or tokens). */
interface Found {
  readonly where: string;
  readonly keys: readonly string[] | string;
}

function keysOf(value: unknown): readonly string[] | string {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.keys(value) : 'not a settings object';
}

function readJson(file: string): Found | null {
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile()) return null;
    if (stat.size > MAX_BYTES) return { where: file, keys: `larger than ${MAX_BYTES} bytes` };
    return { where: file, keys: keysOf(JSON.parse(fs.readFileSync(file, 'utf8'))) };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    return { where: file, keys: `unreadable (${describeError(error)})` };
  }
}

export function findClaudeManagedSettings(locations: ClaudeManagedLocations): Found[] {
  const found: Found[] = [];
  for (const dir of locations.dirs) {
    for (const name of ['managed-settings.json', 'managed-mcp.json']) {
      const item = readJson(path.join(dir, name));
      if (item !== null) found.push(item);
    }
    const dropIns = path.join(dir, 'managed-settings.d');
    let names: string[] = [];
    try {
      names = fs.readdirSync(dropIns).filter((name) => name.endsWith('.json')).sort().slice(0, MAX_DROP_INS);
    } catch {
      // no drop-in folder
    }
    for (const name of names) {
      const item = readJson(path.join(dropIns, name));
      if (item !== null) found.push(item);
    }
  }
  for (const plist of locations.plists ?? []) {
    try {
      found.push({ where: plist, keys: keysOf(parsePlistBytes(fs.readFileSync(plist))) });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') found.push({ where: plist, keys: `unreadable (${describeError(error)})` });
    }
  }
  for (const key of locations.registryKeys ?? []) {
    try {
      const output = (locations.regQuery ?? runRegQuery)(key);
      const settings = output === null ? undefined : parseRegQuery(output).get(key)?.find((value) => value.name === 'Settings');
      if (settings !== undefined) found.push({ where: `${key}: Settings`, keys: keysOf(JSON.parse(settings.data)) });
    } catch (error) {
      found.push({ where: key, keys: `unreadable (${describeError(error)})` });
    }
  }
  return found;
}

export function probeClaudeManagedSettings(locations: ClaudeManagedLocations = claudeManagedLocations()): DoctorProbe {
  return async (): Promise<DoctorCheck> => {
    const check = 'claude managed settings';
    const found = findClaudeManagedSettings(locations);
    const places = [...locations.dirs, ...(locations.plists ?? []), ...(locations.registryKeys ?? [])].join(', ');
    if (found.length === 0) return { check, status: 'ok', detail: `none (looked in ${places}): the child CLI gets only the settings Ward gives it` };
    const listed = found.map((item) => `${item.where} (${typeof item.keys === 'string' ? item.keys : `keys: ${item.keys.join(', ') || 'none'}`})`);
    return {
      check,
      status: 'warning',
      detail: `the child CLI applies these whatever --setting-sources says: ${listed.join('; ')}. Ward's permissions, broker and sandbox still bound what it can do`,
      data: { sources: found.map((item) => ({ where: item.where, keys: item.keys })) },
    };
  };
}
