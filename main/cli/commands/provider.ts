import type { Readable } from 'node:stream';
import { EXIT, WardError } from '../../base/errors.js';
import { parseKind, VARIABLE_FOR, type ModelCredentialKind } from '../../app/settings.js';
import { COMMON_OPTIONS, parseCommandArgs, requirePositional, type Command } from '../command.js';
import { readBoundedStdin, writeJson, writeLine, type CliIo } from '../io.js';

const MAX_STDIN_BYTES = 16 * 1024;
/** How each credential kind reads in a sentence (both take "an"). */
const KIND_NAME: Readonly<Record<ModelCredentialKind, string>> = { 'api-key': 'API key', 'oauth-token': 'OAuth token' };
const STDIN_TIMEOUT_MS = 5 * 60_000;

/** Reads all of stdin, bounded in size and time. */
function readPiped(stream: Readable): Promise<string> {
  return readBoundedStdin(stream, { what: 'the key', maxBytes: MAX_STDIN_BYTES, timeoutMs: STDIN_TIMEOUT_MS });
}

/** A terminal: read one line without echoing it. */
function readHidden(io: CliIo): Promise<string> {
  const stdin = io.stdin as Readable & { setRawMode?: (raw: boolean) => void };
  if (typeof stdin.setRawMode !== 'function') return readPiped(stdin);
  io.stderr.write('Paste the key and press Enter (it is not shown): ');
  return new Promise((resolve, reject) => {
    let value = '';
    const done = (error?: WardError) => {
      stdin.setRawMode?.(false);
      stdin.off('data', onData);
      stdin.pause();
      io.stderr.write('\n');
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: Buffer | string) => {
      for (const char of chunk.toString()) {
        if (char === '\r' || char === '\n') return done();
        if (char === '\u0003' || char === '\u0004') return done(new WardError('usage', 'cancelled'));
        if (char === '\u007f' || char === '\b') value = value.slice(0, -1);
        else value += char;
        if (value.length > MAX_STDIN_BYTES) return done(new WardError('usage', 'the key is too long'));
      }
    };
    stdin.setRawMode?.(true);
    stdin.on('data', onData);
    stdin.resume();
  });
}

export const providerCommand: Command = {
  name: 'provider',
  usage: 'ward provider set-key [--kind api-key|oauth-token] [--namespace NS] < key | ward provider show [--namespace NS] [--json] | ward provider delete-key [--namespace NS]',
  async run(args, context) {
    const { values, positionals } = parseCommandArgs(this, args, { kind: { type: 'string' }, namespace: COMMON_OPTIONS.namespace, json: COMMON_OPTIONS.json });
    const action = requirePositional(this, positionals, 0, 'an action (set-key, show or delete-key)');
    if (positionals.length > 1) {
      // Never echo the extra argument: it may well be the key itself.
      throw new WardError('usage', `"ward provider ${action}" takes no value as an argument: a key in argv is visible in the process list and shell history; pipe it on stdin instead\nusage: ${this.usage}`);
    }
    const { io } = context;
    const app = context.app();
    if (action === 'set-key') {
      const namespace = app.namespaces.existing(values.namespace);
      const wanted = values.kind === undefined ? undefined : parseKind(values.kind);
      const kind = await app.settings.setKey(namespace, io.stdin.isTTY ? await readHidden(io) : await readPiped(io.stdin), wanted);
      if (values.json) writeJson(io.stdout, { namespace: namespace.name, set: true, kind });
      else writeLine(io.stdout, `stored the ${KIND_NAME[kind]} for namespace ${namespace.name} (the CLI receives it as ${VARIABLE_FOR[kind]})`);
      return EXIT.ok;
    }
    if (values.kind !== undefined) throw new WardError('usage', `--kind applies to set-key only\nusage: ${this.usage}`);
    if (action === 'show') {
      const namespace = app.namespaces.existing(values.namespace);
      const status = await app.settings.keyStatus(namespace);
      if (values.json) writeJson(io.stdout, { namespace: namespace.name, ...status });
      else writeLine(io.stdout, status.set ? `an ${KIND_NAME[status.kind]} is stored for namespace ${namespace.name}` : `no model credential is stored for namespace ${namespace.name}`);
      return EXIT.ok;
    }
    if (action === 'delete-key') {
      const namespace = app.namespaces.existing(values.namespace);
      const deleted = await app.settings.clearKey(namespace);
      writeLine(io.stdout, deleted ? `deleted the model credential of namespace ${namespace.name}` : `no model credential was stored for namespace ${namespace.name}`);
      return EXIT.ok;
    }
    throw new WardError('usage', `unknown action (not echoed, in case it is a key)\nusage: ${this.usage}`);
  },
};
