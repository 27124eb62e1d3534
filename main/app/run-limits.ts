/**
 * How long a turn may take, read from the data folder's settings.json (issue 12 #13):
 * `turnTimeoutMinutes` bounds a whole turn; `idleTimeoutMinutes` stops a turn whose CLI has
 * said nothing for that long while no tool was running (a provider that hangs);
 * `warmSessionMinutes` is how long the desktop keeps a conversation's CLI running after a turn
 * (issue 19; 0 turns warm sessions off); `changeStoreMaxMegabytes` caps each namespace's
 * file-change store (issue 26, default 2 GB); `perCallScanMilliseconds` is the most a scan of a
 * run's writable roots may take for its changes to be captured after each tool call (default 50;
 * 0 turns per-call capture off); `serviceIdleMinutes` is how long the `ward` background service
 * waits for work before it exits (issue 29, default 15; 0: `ward run` runs every turn itself). A malformed or
 * out-of-range value fails closed (L1): the run is refused, naming the file and the key.
 */
import path from 'node:path';
import { WardError } from '../base/errors.js';
import { readSettingsObject, SETTINGS_FILE } from '../base/settings-file.js';

export interface RunLimits {
  readonly turnTimeoutMs: number;
  readonly idleTimeoutMs: number;
  /** How long a warm session may wait for its next turn; 0: every turn starts its own CLI. */
  readonly warmSessionMs: number;
  /** Past this, a namespace's file-change store drops the oldest bytes no journal names (issue 26). */
  readonly changeStoreMaxBytes: number;
  /** Per-tool-call change capture is on while a scan of the roots takes at most this (0: off; issue 26). */
  readonly perCallScanMs: number;
}

const LIMITS = {
  turnTimeoutMinutes: { min: 1, max: 24 * 60, fallback: 30 },
  idleTimeoutMinutes: { min: 1, max: 4 * 60, fallback: 10 },
  warmSessionMinutes: { min: 0, max: 60, fallback: 10 },
  changeStoreMaxMegabytes: { min: 1, max: 1024 * 1024, fallback: 2048 },
  perCallScanMilliseconds: { min: 0, max: 5_000, fallback: 50 },
  serviceIdleMinutes: { min: 0, max: 24 * 60, fallback: 15 },
} as const;

/** settings.json's whole number at `key`, within its bounds, else its default; out of bounds is an error naming the file. */
function setting(home: string, settings: Readonly<Record<string, unknown>>, key: keyof typeof LIMITS): number {
  const { min, max, fallback } = LIMITS[key];
  const value = settings[key];
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const unit = key === 'changeStoreMaxMegabytes' ? 'megabytes' : key === 'perCallScanMilliseconds' ? 'milliseconds' : 'minutes';
    throw new WardError('invalid_config', `${path.join(home, SETTINGS_FILE)}: "${key}" must be a whole number of ${unit} from ${min} to ${max}`);
  }
  return value;
}

export function runLimits(home: string): RunLimits {
  const settings = readSettingsObject(home);
  const whole = (key: keyof typeof LIMITS): number => setting(home, settings, key);
  return {
    turnTimeoutMs: whole('turnTimeoutMinutes') * 60_000,
    idleTimeoutMs: whole('idleTimeoutMinutes') * 60_000,
    warmSessionMs: whole('warmSessionMinutes') * 60_000,
    changeStoreMaxBytes: whole('changeStoreMaxMegabytes') * 1024 * 1024,
    perCallScanMs: whole('perCallScanMilliseconds'),
  };
}

/** How long the `ward` service waits for work before it exits (`serviceIdleMinutes`, default 15; 0: no service). */
export function serviceIdleMs(home: string): number {
  return setting(home, readSettingsObject(home), 'serviceIdleMinutes') * 60_000;
}
