import { EXIT, WardError } from '../../base/errors.js';
import { EXPORT_FORMATS, type ExportFormat } from '../../app/exports.js';
import { COMMON_OPTIONS, parseCommandArgs, requirePositional, type Command } from '../command.js';
import { writeJson, writeLine } from '../io.js';

export const exportCommand: Command = {
  name: 'export',
  usage: 'ward export CONVERSATION [--out FILE] [--format bundle|markdown|html] [--name-namespace] [--namespace NS] [--json]',
  async run(args, { io, app }) {
    const { values, positionals } = parseCommandArgs(this, args, {
      ...COMMON_OPTIONS,
      out: { type: 'string', short: 'o' },
      format: { type: 'string', default: 'bundle' },
      'name-namespace': { type: 'boolean', default: false },
    });
    const format = values.format as ExportFormat;
    if (!EXPORT_FORMATS.includes(format)) throw new WardError('usage', `--format is one of ${EXPORT_FORMATS.join(', ')}, not ${JSON.stringify(values.format.slice(0, 20))}`);
    // The database is only read; the signing key is made in the keychain on the first export.
    const store = app().namespaces.readOnly(values.namespace);
    const result = await app().exports.export(store, requirePositional(this, positionals, 0, 'a conversation id'), {
      format,
      ...(values.out === undefined ? {} : { out: values.out }),
      nameNamespace: values['name-namespace'],
    });
    if (values.json) {
      writeJson(io.stdout, result);
      return EXIT.ok;
    }
    writeLine(io.stdout, `exported ${result.events} events to ${result.file}${result.signer === null ? '' : `, signed by ${result.signer}`}`);
    if (result.uncertainRuns.length > 0) writeLine(io.stderr, `ward export: note: ${result.uncertainRuns.length} run(s) have an unknown outcome (${result.uncertainRuns.join(', ')}); the export says so`);
    return EXIT.ok;
  },
};
