import { escapeOneLine } from '../../../common/display.js';
import { EXIT, WardError } from '../../base/errors.js';
import { currentPolicyView } from '../../app/policy-view.js';
import { COMMON_OPTIONS, parseCommandArgs, type Command } from '../command.js';
import { writeJson, writeLine } from '../io.js';

/** A value wider than this is listed below its row, one entry per line, so no entry is hidden. */
const MAX_VALUE_CHARS = 60;
/** Each entry is shown whole up to this bound (escaped; an ellipsis marks a cut); --json has it whole. */
const MAX_ENTRY_CHARS = 1000;

/** A value's entries, one per line: a list's items, a map's "key: value" pairs, else the value itself. */
function valueEntries(json: string): string[] {
  const value = JSON.parse(json) as unknown;
  if (Array.isArray(value) && value.length > 0) return value.map((entry) => JSON.stringify(entry));
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0) return Object.entries(value).map(([key, entry]) => `${key}: ${JSON.stringify(entry)}`);
  return [json];
}

/** The value cell of a row, and the lines below it when the value is too wide for the cell. */
function valueCell(json: string | null, whenUnset: string): { cell: string; below: string[] } {
  if (json === null) return { cell: escapeOneLine(`(not set: ${whenUnset})`, MAX_ENTRY_CHARS), below: [] };
  const cell = escapeOneLine(json, MAX_ENTRY_CHARS);
  if (cell.length <= MAX_VALUE_CHARS) return { cell, below: [] };
  const entries = valueEntries(json);
  return { cell: `(${entries.length} ${entries.length === 1 ? 'entry' : 'entries'} below)`, below: entries.map((entry) => `  - ${escapeOneLine(entry, MAX_ENTRY_CHARS)}`) };
}

export const policyCommand: Command = {
  name: 'policy',
  usage: 'ward policy show [--json]',
  async run(args, { io }) {
    const { values, positionals } = parseCommandArgs(this, args, { json: COMMON_OPTIONS.json });
    if (positionals.length !== 1 || positionals[0] !== 'show') throw new WardError('usage', `usage: ${this.usage}`);
    // Read afresh (not through the app), so a broken policy is shown rather than refused.
    const { lookedIn, ...view } = currentPolicyView(io.env);
    if (values.json) {
      writeJson(io.stdout, view);
      return view.errors.length > 0 ? EXIT.unavailable : EXIT.ok;
    }
    writeLine(io.stdout, view.sources.length === 0 ? `No admin policy (a personal install). Looked in ${lookedIn}${io.env.WARD_POLICY ? ` and WARD_POLICY` : ''}.` : `Admin policy from ${escapeOneLine(view.sources.join(', '), MAX_ENTRY_CHARS)}`);
    writeLine(io.stdout);
    const rows = view.settings.map((setting) => {
      const { cell, below } = valueCell(setting.value, setting.whenUnset);
      return { cells: [setting.key, cell, setting.level ?? '', escapeOneLine(setting.sources.join(', '), MAX_ENTRY_CHARS)], below };
    });
    const header = { cells: ['KEY', 'VALUE', 'LEVEL', 'SOURCE'], below: [] };
    const widths = [0, 1, 2].map((column) => Math.max(...[header, ...rows].map((row) => row.cells[column]!.length)));
    for (const row of [header, ...rows]) {
      writeLine(io.stdout, row.cells.map((cell, column) => (column < 3 ? cell.padEnd(widths[column]!) : cell)).join('  ').trimEnd());
      for (const line of row.below) writeLine(io.stdout, line);
    }
    // Unknown key names and values come from the files as written: escaped like every outside text.
    for (const warning of view.warnings) writeLine(io.stdout, `warning: ${escapeOneLine(warning, MAX_ENTRY_CHARS)}`);
    for (const error of view.errors) writeLine(io.stdout, `error: ${escapeOneLine(error, MAX_ENTRY_CHARS)}`);
    if (view.errors.length > 0) writeLine(io.stdout, 'Ward refuses to start runs until the policy is fixed.');
    writeLine(io.stdout, 'Changes to the policy take effect when Ward next starts.');
    return view.errors.length > 0 ? EXIT.unavailable : EXIT.ok;
  },
};
