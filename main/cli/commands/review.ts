import { EXIT } from '../../base/errors.js';
import { bundlePage } from '../../app/review.js';
import { openBundle, parseSigner } from '../../export/bundle.js';
import { COMMON_OPTIONS, parseCommandArgs, requirePositional, type Command } from '../command.js';
import { EventPrinter } from '../format-event.js';
import { writeJson, writeLine } from '../io.js';
import { describeVerdict } from './verify-bundle.js';

export const reviewCommand: Command = {
  name: 'review',
  summary: 'print an export bundle as "ward replay" would, after checking it (read-only, offline)',
  usage: 'ward review FILE [--signer KEYFILE|FINGERPRINT] [--json]',
  async run(args, { io }) {
    const { values, positionals } = parseCommandArgs(this, args, { json: COMMON_OPTIONS.json, signer: { type: 'string' } });
    const file = requirePositional(this, positionals, 0, 'a bundle file');
    const expected = values.signer === undefined ? undefined : parseSigner(values.signer).fingerprint;
    const bundle = await openBundle(file, expected === undefined ? {} : { expectedSigner: expected });
    try {
      if (!values.json) {
        writeLine(io.stdout, `Read-only review · ${bundle.verdict.ok ? `signed by ${bundle.verdict.signer}` : 'NOT VERIFIED'}`);
        describeVerdict(io, bundle.verdict);
        writeLine(io.stdout);
      }
      const printer = new EventPrinter((line) => writeLine(io.stdout, line));
      for (let page = 0; page < bundle.pageCount; page++) {
        for (const event of await bundlePage(bundle, page)) {
          if (values.json) writeJson(io.stdout, event);
          else printer.push(event);
        }
      }
      printer.end();
      return bundle.verdict.ok ? EXIT.ok : EXIT.verifyFailed;
    } finally {
      await bundle.close();
    }
  },
};
