import { escapeOneLine } from '../../../common/display.js';
import { EXIT, WardError } from '../../base/errors.js';
import { COMMON_OPTIONS, parseCommandArgs, type Command } from '../command.js';
import { writeJson, writeLine } from '../io.js';

export const whoamiCommand: Command = {
  name: 'whoami',
  usage: 'ward whoami [--namespace NS] [--json]',
  async run(args, context) {
    const { values } = parseCommandArgs(this, args, { namespace: COMMON_OPTIONS.namespace, json: COMMON_OPTIONS.json }, false);
    const { namespace, sessions } = context.app().identity.sessions(values.namespace);
    if (sessions.length === 0) throw new WardError('not_signed_in', `not signed in (namespace ${namespace}); run "ward login --issuer URL --client-id ID"`);
    for (const session of sessions) {
      const row = { namespace: namespace, issuer: session.issuer, clientId: session.clientId, subject: session.subject, signedInAt: session.signedInAt, expiresAt: session.expiresAt, cleanupPending: session.cleanupPending };
      if (values.json) writeJson(context.io.stdout, row);
      else writeLine(context.io.stdout, `${escapeOneLine(row.subject, 200)} at ${escapeOneLine(row.issuer, 300)} (client ${escapeOneLine(row.clientId, 200)}, namespace ${row.namespace})${row.cleanupPending ? ' [replaced; waiting for revocation, run "ward logout"]' : ''}`);
    }
    return EXIT.ok;
  },
};
