import { escapeOneLine } from '../../../common/display.js';
import { COMMON_OPTIONS, parseCommandArgs, type Command } from '../command.js';
import { EXIT } from '../../base/errors.js';
import { writeJson, writeLine } from '../io.js';

export const logoutCommand: Command = {
  name: 'logout',
  usage: 'ward logout [--issuer URL] [--client-id ID] [--local] [--namespace NS] [--json]',
  async run(args, context) {
    const { values } = parseCommandArgs(
      this,
      args,
      { issuer: { type: 'string' }, 'client-id': { type: 'string' }, local: { type: 'boolean', default: false }, namespace: COMMON_OPTIONS.namespace, json: COMMON_OPTIONS.json },
      false,
    );
    const result = await context.app().identity.signOut(values.namespace, { issuer: values.issuer, clientId: values['client-id'] }, { localOnly: values.local });
    const { stdout, stderr } = context.io;
    for (const done of result.signedOut) {
      if (values.json) writeJson(stdout, { ...done, status: 'signed_out' });
      else writeLine(stdout, `signed out ${escapeOneLine(done.subject, 200)} at ${escapeOneLine(done.issuer, 300)}${done.revoked ? ' (revoked at the provider)' : ' (forgotten locally; not revoked)'}`);
    }
    for (const kept of result.kept) {
      if (values.json) writeJson(stdout, { ...kept, status: 'kept' });
      writeLine(stderr, `ward logout: kept ${escapeOneLine(kept.subject, 200)} at ${escapeOneLine(kept.issuer, 300)}: ${escapeOneLine(kept.reason, 500)}; retry later, or "ward logout --local" forgets it without revoking`);
    }
    if (result.signedOut.length === 0 && result.kept.length === 0) writeLine(stdout, `no sign-in to sign out of (namespace ${result.namespace})`);
    return result.kept.length > 0 ? EXIT.unavailable : EXIT.ok;
  },
};
