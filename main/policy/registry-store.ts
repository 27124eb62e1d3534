/**
 * Windows: the policy Group Policy writes under HKLM\SOFTWARE\Policies\Ward (mandatory), its
 * Recommended subkey (defaults the user may change), and HKCU\SOFTWARE\Policies\Ward, which only
 * adds restrictions (the merge lets the stricter value win). Read with the system's own
 * reg.exe at a fixed path (never one found through PATH or SystemRoot, which the user controls),
 * and parsed from its `reg query /s` output.
 *
 * Values, as the ADMX templates write them (main/policy/schema.ts storageShape): booleans and
 * numbers REG_DWORD, text and choices REG_SZ, a list a subkey of numbered REG_SZ values (or one
 * REG_MULTI_SZ), caps a subkey per kind, managedConnections JSON text.
 */
import { execFileSync } from 'node:child_process';
import { POLICY_KEYS } from './schema.js';
import { storageShape } from './storage-shape.js';
import type { BrokenSource, PolicyDocument } from './merge.js';

export const REG_EXE = 'C:\\Windows\\System32\\reg.exe';
export const MACHINE_KEY = 'HKEY_LOCAL_MACHINE\\SOFTWARE\\Policies\\Ward';
export const USER_KEY = 'HKEY_CURRENT_USER\\SOFTWARE\\Policies\\Ward';
const RECOMMENDED = 'Recommended';
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;
const QUERY_TIMEOUT_MS = 10_000;

export interface RegistryValue {
  readonly name: string;
  readonly type: string;
  readonly data: string;
}

/** `reg query KEY /s` output as key path → its values (paths as printed, in full). */
export function parseRegQuery(output: string): Map<string, RegistryValue[]> {
  const keys = new Map<string, RegistryValue[]>();
  let current: RegistryValue[] | undefined;
  for (const line of output.split(/\r?\n/)) {
    if (line.trim() === '') continue;
    if (/^\s*HKEY_/.test(line)) {
      current = [];
      keys.set(line.trim(), current);
      continue;
    }
    const value = /^ {4}(.*?) {4}(REG_[A-Z_]+)(?: {4}(.*))?$/.exec(line);
    if (value !== null && current !== undefined) current.push({ name: value[1]!, type: value[2]!, data: value[3] ?? '' });
  }
  return keys;
}

type Converted = { value: unknown } | { problem: string };

function wrongType(value: RegistryValue, wanted: string): Converted {
  return { problem: `is ${value.type}, expected ${wanted}` };
}

function dword(value: RegistryValue): number | null {
  return value.type === 'REG_DWORD' && /^0x[0-9a-f]+$/i.test(value.data) ? Number.parseInt(value.data.slice(2), 16) : null;
}

function fromValue(key: (typeof POLICY_KEYS)[number], value: RegistryValue): Converted {
  const shape = storageShape(key);
  switch (shape.kind) {
    case 'boolean': {
      const number = dword(value);
      if (number === null) return wrongType(value, 'REG_DWORD 0 or 1');
      return number === 0 || number === 1 ? { value: number === 1 } : { problem: `is ${number}, expected 0 or 1` };
    }
    case 'integer': {
      const number = dword(value);
      // Range is the schema's to check, so the message names the limits.
      return number === null ? wrongType(value, 'REG_DWORD') : { value: number };
    }
    case 'choice':
    case 'text':
      return value.type === 'REG_SZ' ? { value: value.data } : wrongType(value, 'REG_SZ');
    case 'list':
      return value.type === 'REG_MULTI_SZ' ? { value: value.data === '' ? [] : value.data.split('\\0') } : wrongType(value, 'a subkey of REG_SZ values, or REG_MULTI_SZ');
    case 'json':
      if (value.type !== 'REG_SZ') return wrongType(value, 'REG_SZ holding JSON');
      try {
        return { value: JSON.parse(value.data) as unknown };
      } catch {
        return { problem: 'is not valid JSON' };
      }
    case 'listsByName':
      return wrongType(value, `a subkey per kind (${shape.names.join(', ')})`);
  }
}

/** A list subkey's REG_SZ values, in the order of their numeric names (ADMX lists write 1, 2, 3…). */
function listFrom(values: readonly RegistryValue[]): Converted {
  const strings = values.filter((value) => value.name !== '(Default)');
  const wrong = strings.find((value) => value.type !== 'REG_SZ');
  if (wrong !== undefined) return { problem: `value ${wrong.name} ${(wrongType(wrong, 'REG_SZ') as { problem: string }).problem}` };
  const number = (name: string) => (/^\d+$/.test(name) ? Number(name) : Number.MAX_SAFE_INTEGER);
  return { value: [...strings].sort((a, b) => number(a.name) - number(b.name) || a.name.localeCompare(b.name)).map((value) => value.data) };
}

/**
 * One policy document from the values under `root` (mandatory) or `root\Recommended`. Problems
 * with a value are kept as invalid values under their key, so the merge reports them with the
 * key's place; unknown values and subkeys pass through to be warned about.
 */
function documentAt(keys: ReadonlyMap<string, RegistryValue[]>, root: string, problems: Map<string, string>): Record<string, unknown> {
  const lower = new Map([...keys].map(([name, values]) => [name.toLowerCase(), { name, values }]));
  const document: Record<string, unknown> = {};
  const claimed = new Set<string>([root.toLowerCase(), `${root}\\${RECOMMENDED}`.toLowerCase()]);
  const byName = (name: string) => POLICY_KEYS.find((key) => key.key.toLowerCase() === name.toLowerCase());
  for (const value of lower.get(root.toLowerCase())?.values ?? []) {
    if (value.name === '(Default)') continue;
    const key = byName(value.name);
    if (key === undefined) {
      document[value.name] = value.data;
      continue;
    }
    const converted = fromValue(key, value);
    if ('problem' in converted) problems.set(`${root}\\${value.name}`, converted.problem);
    else document[key.key] = converted.value;
  }
  for (const key of POLICY_KEYS) {
    const shape = storageShape(key);
    const subkey = `${root}\\${key.key}`.toLowerCase();
    if (shape.kind === 'list' && lower.has(subkey)) {
      claimed.add(subkey);
      const converted = listFrom(lower.get(subkey)!.values);
      if ('problem' in converted) problems.set(`${root}\\${key.key}`, converted.problem);
      else document[key.key] = converted.value;
    }
    if (shape.kind === 'listsByName' && (lower.has(subkey) || shape.names.some((name) => lower.has(`${subkey}\\${name}`)))) {
      claimed.add(subkey);
      const byKind: Record<string, unknown> = {};
      for (const name of shape.names) {
        const kindKey = `${subkey}\\${name}`;
        if (!lower.has(kindKey)) continue;
        claimed.add(kindKey);
        const converted = listFrom(lower.get(kindKey)!.values);
        if ('problem' in converted) problems.set(`${root}\\${key.key}\\${name}`, converted.problem);
        else byKind[name] = converted.value;
      }
      document[key.key] = byKind;
    }
  }
  // Direct subkeys nothing claimed are unknown keys to warn about (Recommended is read on its own).
  const prefix = `${root.toLowerCase()}\\`;
  for (const [name, { name: shownName }] of lower) {
    const rest = shownName.slice(root.length + 1);
    if (!name.startsWith(prefix) || rest.includes('\\') || claimed.has(name) || rest.toLowerCase() === RECOMMENDED.toLowerCase()) continue;
    document[rest] = '(subkey)';
  }
  return document;
}

/** The policy document under one registry key, from `reg query KEY /s` output. */
export function registryDocument(output: string, root: string): { document: PolicyDocument; problems: BrokenSource[] } {
  const keys = parseRegQuery(output);
  const problems = new Map<string, string>();
  const mandatory = documentAt(keys, root, problems);
  const recommended = documentAt(keys, `${root}\\${RECOMMENDED}`, problems);
  const short = (text: string) => text.replace(/^HKEY_LOCAL_MACHINE/, 'HKLM').replace(/^HKEY_CURRENT_USER/, 'HKCU');
  const locate = (key: string, level: 'mandatory' | 'recommended') => {
    const base = level === 'recommended' ? `${root}\\${RECOMMENDED}` : root;
    const shape = POLICY_KEYS.find((item) => item.key === key);
    const kind = shape === undefined ? null : storageShape(shape).kind;
    return short(kind === 'list' || kind === 'listsByName' ? `${base}\\${key}` : `${base}: ${key}`);
  };
  return {
    document: { source: short(root), mandatory, recommended, locate },
    problems: [...problems].map(([place, problem]) => ({ source: short(place), problem })),
  };
}

/** Output of `reg query KEY /s`, or null when the key does not exist. */
export type RegQuery = (key: string) => string | null;

/** Runs the system's reg.exe (Windows only, at start); a failure other than "no such key" fails closed. */
export const runRegQuery: RegQuery = (key) => {
  try {
    return execFileSync(REG_EXE, ['query', key, '/s'], { windowsHide: true, timeout: QUERY_TIMEOUT_MS, maxBuffer: MAX_OUTPUT_BYTES, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const failure = error as { status?: number | null; stderr?: string; message: string };
    // reg.exe exits 1 and says so on stderr when the key is absent.
    if (failure.status === 1 && /unable to find/i.test(failure.stderr ?? '')) return null;
    throw new Error(`${REG_EXE} query ${key} failed: ${failure.stderr?.trim() || failure.message}`);
  }
};
