import { EXIT, WardError } from '../../base/errors.js';
import { policyView } from '../../app/policy-view.js';
import { describeLocations, readPolicy, systemPolicyLocations } from '../../policy/policy.js';
import { COMMON_OPTIONS, parseCommandArgs, type Command } from '../command.js';
import { writeJson, writeLine } from '../io.js';

/** Wide values are cut in the table; --json has them whole. */
const MAX_VALUE_CHARS = 60;

export const policyCommand: Command = {
  name: 'policy',
  usage: 'ward policy show [--json]',
  async run(args, { io }) {
    const { values, positionals } = parseCommandArgs(this, args, { json: COMMON_OPTIONS.json });
    if (positionals.length !== 1 || positionals[0] !== 'show') throw new WardError('usage', `usage: ${this.usage}`);
    // Read afresh (not through the app), so a broken policy is shown rather than refused.
    const view = policyView(readPolicy(io.env));
    if (values.json) {
      writeJson(io.stdout, view);
      return view.errors.length > 0 ? EXIT.unavailable : EXIT.ok;
    }
    writeLine(io.stdout, view.sources.length === 0 ? `No admin policy (a personal install). Looked in ${describeLocations(systemPolicyLocations())}${io.env.WARD_POLICY ? ` and WARD_POLICY` : ''}.` : `Admin policy from ${view.sources.join(', ')}`);
    writeLine(io.stdout);
    const rows = view.settings.map((setting) => {
      const value = setting.value ?? `(not set: ${setting.whenUnset})`;
      return [setting.key, value.length > MAX_VALUE_CHARS ? `${value.slice(0, MAX_VALUE_CHARS - 1)}…` : value, setting.level ?? '', setting.sources.join(', ')];
    });
    const widths = [0, 1, 2].map((column) => Math.max(...[['KEY', 'VALUE', 'LEVEL'], ...rows].map((row) => row[column]!.length)));
    for (const row of [['KEY', 'VALUE', 'LEVEL', 'SOURCE'], ...rows]) writeLine(io.stdout, row.map((cell, column) => (column < 3 ? cell.padEnd(widths[column]!) : cell)).join('  ').trimEnd());
    for (const warning of view.warnings) writeLine(io.stdout, `warning: ${warning}`);
    for (const error of view.errors) writeLine(io.stdout, `error: ${error}`);
    if (view.errors.length > 0) writeLine(io.stdout, 'Ward refuses to start runs until the policy is fixed.');
    writeLine(io.stdout, 'Changes to the policy take effect when Ward next starts.');
    return view.errors.length > 0 ? EXIT.unavailable : EXIT.ok;
  },
};
