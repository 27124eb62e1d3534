import { escapeOneLine } from '../../../common/display.js';
import { openSystemBrowser } from '../../app/browser.js';
import { EXIT, WardError } from '../../base/errors.js';
import { COMMON_OPTIONS, parseCommandArgs, type Command } from '../command.js';
import { writeJson, writeLine } from '../io.js';

export const loginCommand: Command = {
  name: 'login',
  usage: 'ward login --issuer URL --client-id ID [--scope "openid ..."] [--namespace NS] [--no-browser] [--timeout SECONDS] [--allow-insecure-http] [--json]',
  async run(args, context) {
    const { values } = parseCommandArgs(
      this,
      args,
      {
        issuer: { type: 'string' },
        'client-id': { type: 'string' },
        scope: { type: 'string' },
        'no-browser': { type: 'boolean', default: false },
        timeout: { type: 'string' },
        'allow-insecure-http': { type: 'boolean', default: false },
        namespace: COMMON_OPTIONS.namespace,
        json: COMMON_OPTIONS.json,
      },
      false,
    );
    if (values.issuer === undefined || values['client-id'] === undefined) throw new WardError('usage', `--issuer and --client-id are required\nusage: ${this.usage}`);
    let timeoutMs: number | undefined;
    if (values.timeout !== undefined) {
      const seconds = Number(values.timeout);
      if (!Number.isInteger(seconds) || seconds < 1 || seconds > 3600) throw new WardError('usage', '--timeout must be a whole number of seconds from 1 to 3600');
      timeoutMs = seconds * 1000;
    }
    const { io } = context;
    const result = await context.app().identity.signIn(values.namespace, {
      issuer: values.issuer,
      clientId: values['client-id'],
      scope: values.scope,
      allowInsecureHttp: values['allow-insecure-http'],
      timeoutMs,
      openBrowser: values['no-browser'] ? async () => undefined : openSystemBrowser,
      onAuthorizationUrl: (url) => writeLine(io.stderr, `${values['no-browser'] ? 'Open this address in a browser to sign in' : 'Opening the browser to sign in; if it does not open, visit'}:\n${url.href}`),
    });
    const { session, cleanupRequired, namespace } = result;
    if (values.json) {
      writeJson(io.stdout, { namespace: namespace, issuer: session.issuer, clientId: session.clientId, subject: session.subject, expiresAt: session.expiresAt, cleanupRequired });
    } else {
      writeLine(io.stdout, `signed in to ${escapeOneLine(session.issuer, 300)} as ${escapeOneLine(session.subject, 200)} (namespace ${namespace})`);
      if (cleanupRequired) writeLine(io.stdout, `note: an older sign-in of this identity could not be revoked yet; it is kept, and "ward logout --issuer ${escapeOneLine(session.issuer, 300)}" finishes it later`);
    }
    return EXIT.ok;
  },
};
