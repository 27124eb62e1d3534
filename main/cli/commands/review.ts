import { escapeOneLine } from '../../../common/display.js';
import { EXIT } from '../../base/errors.js';
import { bundlePage, openBundle } from '../../app/review.js';
import type { Command } from '../command.js';
import { EventPrinter } from '../format-event.js';
import { writeJson, writeLine } from '../io.js';
import { describeVerdict, parseBundleArgs } from './verify-bundle.js';

export const reviewCommand: Command = {
  name: 'review',
  usage: 'ward review FILE [--signer KEYFILE|FINGERPRINT] [--json]',
  async run(args, { io }) {
    const { file, json, options } = parseBundleArgs(this, args);
    const bundle = await openBundle(file, options);
    try {
      if (!json) {
        writeLine(io.stdout, `Read-only review · ${bundle.verdict.ok ? `signed by ${escapeOneLine(bundle.verdict.signer, 200)}` : 'NOT VERIFIED'}`);
        describeVerdict(io, bundle.verdict);
        writeLine(io.stdout);
      }
      const printer = new EventPrinter((line) => writeLine(io.stdout, line));
      for (let page = 0; page < bundle.pageCount; page++) {
        for (const event of await bundlePage(bundle, page)) {
          if (json) writeJson(io.stdout, event);
          else printer.push(event);
        }
      }
      printer.finish();
      return bundle.verdict.ok ? EXIT.ok : EXIT.verifyFailed;
    } finally {
      await bundle.close();
    }
  },
};
