import { EXIT, WardError } from '../../base/errors.js';
import { COMMON_OPTIONS, parseCommandArgs, requirePositional, type Command } from '../command.js';
import { writeJson, writeLine } from '../io.js';

export const keysCommand: Command = {
  name: 'keys',
  usage: 'ward keys show [--namespace NS] [--json] | ward keys export-public [--out FILE] [--namespace NS]',
  async run(args, { io, app }) {
    const { values, positionals } = parseCommandArgs(this, args, { ...COMMON_OPTIONS, out: { type: 'string', short: 'o' } });
    const action = requirePositional(this, positionals, 0, 'an action (show or export-public)');
    const ns = app().namespaces.existing(values.namespace);
    if (action === 'show') {
      const key = await app().keys.signingKey(ns, false);
      if (values.json) writeJson(io.stdout, { namespace: ns.name, fingerprint: key?.fingerprint ?? null, publicKey: key?.pem ?? null });
      else if (key === null) writeLine(io.stdout, `namespace ${ns.name} has no signing key yet: it is made by its first "ward export" (or "ward keys export-public")`);
      else io.stdout.write(`namespace ${ns.name} signs exports with\n${key.fingerprint}\n\n${key.pem}`);
      return EXIT.ok;
    }
    if (action === 'export-public') {
      // Handing out the public key is how a signer is pinned before the first bundle: make the key if needed.
      if (values.out === undefined) io.stdout.write((await app().keys.signingKey(ns, true))!.pem);
      else writeLine(io.stdout, `wrote ${(await app().keys.writePublicKey(ns, values.out)).fingerprint} to ${values.out}`);
      return EXIT.ok;
    }
    throw new WardError('usage', `unknown action ${JSON.stringify(action)}\nusage: ${this.usage}`);
  },
};
