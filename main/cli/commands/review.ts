import type { Writable } from 'node:stream';
import { escapeOneLine } from '../../../common/display.js';
import { EXIT } from '../../base/errors.js';
import { bundleEvent, bundlePage, openBundle, type BundleEvent, type BundleLine, type BundleVerdict, type EarlyVerdict } from '../../app/bundle-review.js';
import type { Command } from '../command.js';
import { EventPrinter } from '../format-event.js';
import { writeJson, writeLine, type CliIo } from '../io.js';
import { describeVerdict, parseBundleArgs } from './verify-bundle.js';

const NOT_SIGNED = 'NOT AS SIGNED';
const NOT_YET_VERIFIED = 'NOT YET VERIFIED';
const field = (text: string): string => escapeOneLine(text, 1_000);
/** Thrown from within the reading when stdout's reader has gone: the review stops there (exit 130), without a verdict. */
const OUTPUT_CLOSED = new Error('the output was closed');

/** Waits while stdout's reader is behind (a pager, a slow pipe): the bundle is read no faster than it is shown. */
async function drained(stream: Writable): Promise<void> {
  if (!stream.writableNeedDrain || stream.destroyed) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      stream.off('drain', done).off('close', done);
      resolve();
    };
    stream.on('drain', done).on('close', done);
  });
}

/** How much of an unverified bundle matches what was signed. */
function matchedLine(io: CliIo, { events, signedEvents }: BundleVerdict): void {
  const rest = signedEvents === events ? 'nothing here is verified' : `every ${signedEvents === 0 ? '' : 'other '}line is marked "${NOT_SIGNED}"`;
  writeLine(io.stdout, `  ${signedEvents === 0 ? 'no event' : `${signedEvents} of ${events} events`} could be matched to what was signed; ${rest}`);
}

/**
 * The banner of a bundle shown as it is read, before its journal is: NOT VERIFIED when the
 * signature, the signer or the list already fails; otherwise NOT YET VERIFIED, and no signer under
 * it: whether the journal is whole, in order and the file signed is known only at its end, in the verdict.
 */
function streamBanner(io: CliIo, early: EarlyVerdict): void {
  if (early.perEvent && early.problems.length === 0) {
    writeLine(io.stdout, `Read-only review · ${NOT_YET_VERIFIED} · the verdict follows the last event`);
    writeLine(io.stdout, `  each event is held against the signed list of event hashes as it is shown; one that is not is marked "${NOT_SIGNED}"`);
    writeLine(io.stdout, '  whether the journal is whole, in order and the file signed, and by whom, is known after the last event: nothing above the verdict there is verified');
  } else {
    writeLine(io.stdout, 'Read-only review · NOT VERIFIED');
    writeLine(io.stdout, `NOT VERIFIED: ${field(early.problems[0]!)}`);
    writeLine(io.stdout, early.perEvent ? `  each event is held against what was signed as it is shown; one that is not is marked "${NOT_SIGNED}"` : `  no event can be matched to what was signed; every line is marked "${NOT_SIGNED}"`);
  }
  writeLine(io.stdout);
}

/** Prints the bundle, streamed when it can be; the verdict's exit code. */
async function review(io: CliIo, file: string, json: boolean, options: { expectedSigner?: string }): Promise<number> {
  // E4: each line of an event that is not the one signed says so first; nothing of an unverified bundle passes as signed.
  let signed = true;
  const printer = new EventPrinter((line) => writeLine(io.stdout, signed ? line : `${NOT_SIGNED} ${line}`));
  const show = async (event: BundleEvent) => {
    // `ward review big | head`: once the reader is gone, the rest of the bundle is not read.
    if (io.stdout.destroyed) throw OUTPUT_CLOSED;
    signed = event.signed;
    if (json) writeJson(io.stdout, event);
    else printer.push(event);
    await drained(io.stdout);
  };
  // A bundle held against its signed list (or whose signature already failed) is shown as it is read: each
  // line's mark is final when printed, the first screen comes at once, and the verdict on the whole follows.
  let conversationId = '';
  let streamed = false;
  const stream = {
    onChecked: (early: EarlyVerdict) => {
      streamed = !json && (early.perEvent || early.problems.length > 0);
      if (streamed) streamBanner(io, early);
      conversationId = early.statement.conversationId;
      return streamed;
    },
    onLine: (line: BundleLine) => show(bundleEvent(conversationId, line)),
  };
  const bundle = await openBundle(file, { ...options, stream });
  try {
    const { verdict } = bundle;
    if (!json && !streamed) {
      writeLine(io.stdout, `Read-only review · ${verdict.ok ? `signed by ${escapeOneLine(verdict.signer, 200)}` : 'NOT VERIFIED'}`);
      describeVerdict(io, verdict);
      if (!verdict.ok) matchedLine(io, verdict);
      writeLine(io.stdout);
    }
    if (!streamed) for (let page = 0; page < bundle.pageCount; page++) for (const event of await bundlePage(bundle, page)) await show(event);
    signed = true;
    printer.finish();
    if (streamed) {
      writeLine(io.stdout);
      describeVerdict(io, verdict);
      if (!verdict.ok) matchedLine(io, verdict);
    }
    return verdict.ok ? EXIT.ok : EXIT.verifyFailed;
  } finally {
    await bundle.close();
  }
}

export const reviewCommand: Command = {
  name: 'review',
  appless: true,
  usage: 'ward review FILE [--signer KEYFILE|FINGERPRINT] [--json]',
  async run(args, { io }) {
    const { file, json, options } = parseBundleArgs(this, args);
    try {
      return await review(io, file, json, options);
    } catch (error) {
      // Stopped before its verdict: not a success, and nothing more to say to a reader that is gone.
      if (error === OUTPUT_CLOSED) return EXIT.stopped;
      throw error;
    }
  },
};
