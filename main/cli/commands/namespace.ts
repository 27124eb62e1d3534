import { EXIT, WardError } from '../../base/errors.js';
import { COMMON_OPTIONS, parseCommandArgs, requirePositional, type Command } from '../command.js';
import { writeJson, writeLine } from '../io.js';

export const namespaceCommand: Command = {
  name: 'namespace',
  usage: 'ward namespace create NAME | ward namespace list [--json]',
  async run(args, { io, app }) {
    const { values, positionals } = parseCommandArgs(this, args, { json: COMMON_OPTIONS.json });
    const action = requirePositional(this, positionals, 0, 'an action (create or list)');
    if (action === 'create') {
      const created = app().namespaces.create(requirePositional(this, positionals, 1, 'a namespace name'));
      if (values.json) writeJson(io.stdout, created);
      else writeLine(io.stdout, `created namespace ${created.name}`);
      return EXIT.ok;
    }
    if (action === 'list') {
      for (const ns of app().namespaces.summaries()) {
        if (values.json) writeJson(io.stdout, ns);
        else writeLine(io.stdout, ns.name);
      }
      return EXIT.ok;
    }
    throw new WardError('usage', `unknown action ${JSON.stringify(action)}\nusage: ${this.usage}`);
  },
};
