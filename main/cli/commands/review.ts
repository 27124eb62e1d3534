import { escapeOneLine } from '../../../common/display.js';
import { EXIT } from '../../base/errors.js';
import { bundlePage, openBundle } from '../../app/review.js';
import type { Command } from '../command.js';
import { EventPrinter } from '../format-event.js';
import { writeJson, writeLine } from '../io.js';
import { describeVerdict, parseBundleArgs } from './verify-bundle.js';

const NOT_SIGNED = 'NOT AS SIGNED';

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
        const { events, signedEvents } = bundle.verdict;
        if (!bundle.verdict.ok) writeLine(io.stdout, `  ${signedEvents === 0 ? 'no event' : `${signedEvents} of ${events} events`} could be matched to what was signed; ${signedEvents === events ? 'nothing here is verified' : `every ${signedEvents === 0 ? '' : 'other '}line is marked "${NOT_SIGNED}"`}`);
        writeLine(io.stdout);
      }
      // E4: each line of an event that is not the one signed says so first; nothing of an unverified bundle passes as signed.
      let signed = true;
      const printer = new EventPrinter((line) => writeLine(io.stdout, signed ? line : `${NOT_SIGNED} ${line}`));
      for (let page = 0; page < bundle.pageCount; page++) {
        for (const event of await bundlePage(bundle, page)) {
          signed = event.signed;
          if (json) writeJson(io.stdout, event);
          else printer.push(event);
        }
      }
      signed = true;
      printer.finish();
      return bundle.verdict.ok ? EXIT.ok : EXIT.verifyFailed;
    } finally {
      await bundle.close();
    }
  },
};
