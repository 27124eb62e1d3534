/** The data folder's settings.json: read bounded, and a malformed file fails closed (L1). */
import fs from 'node:fs';
import path from 'node:path';
import { WardError } from './errors.js';

export const SETTINGS_FILE = 'settings.json';
const MAX_SETTINGS_BYTES = 64 * 1024;

/** settings.json as an object; a missing file is an empty one. */
export function readSettingsObject(home: string): Readonly<Record<string, unknown>> {
  const file = path.join(home, SETTINGS_FILE);
  let raw: string;
  try {
    if (fs.statSync(file).size > MAX_SETTINGS_BYTES) throw new WardError('invalid_config', `${file} is larger than ${MAX_SETTINGS_BYTES} bytes`);
    raw = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw new WardError('invalid_config', `${file} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new WardError('invalid_config', `${file} must hold a JSON object`);
  return parsed as Record<string, unknown>;
}
