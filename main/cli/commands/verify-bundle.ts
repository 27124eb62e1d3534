import { escapeOneLine } from '../../../common/display.js';
import { EXIT } from '../../base/errors.js';
import { parseSigner, verifyBundle, type BundleVerdict } from '../../app/bundle-review.js';
import { COMMON_OPTIONS, parseCommandArgs, requirePositional, type Command } from '../command.js';
import { writeJson, writeLine, type CliIo } from '../io.js';

/** A field of a bundle shown on one line: whatever the bundle holds, it cannot start a line of its own. */
const field = (text: string | number, max = 200): string => escapeOneLine(String(text), max);

/**
 * What a bundle is, in a few lines: the verdict first, in Ward's words only. Everything else
 * comes from the bundle (or its file name) and is escaped onto its own line (D1).
 */
export function describeVerdict(io: CliIo, verdict: BundleVerdict): void {
  const { statement } = verdict;
  if (verdict.ok) writeLine(io.stdout, `ok: ${field(verdict.file, 1_000)} is intact and signed`);
  else writeLine(io.stdout, `NOT VERIFIED: ${verdict.firstBadSeq === null ? '' : `first bad event is #${verdict.firstBadSeq}: `}${field(verdict.problems[0] ?? 'no reason given', 1_000)}`);
  for (const problem of verdict.problems.slice(1)) writeLine(io.stdout, `  also: ${field(problem, 1_000)}`);
  writeLine(io.stdout, `  conversation ${field(statement.conversationId)} ("${field(statement.title)}"): ${verdict.events} events, chain head ${field(statement.chainHead)}`);
  const trust = verdict.expectedSigner === null ? 'the key inside the bundle; pass --signer to require a key you trust' : verdict.expectedSigner === verdict.signer ? 'the expected signer' : `expected ${field(verdict.expectedSigner)}`;
  writeLine(io.stdout, `  signature ${verdict.signature} by ${field(verdict.signer)} (${trust})`);
  writeLine(io.stdout, `  exported ${field(statement.exportedAt, 64)} by Ward ${field(statement.wardVersion, 64)} (Claude CLI ${field(statement.cliVersion, 64)}), agent ${field(statement.agent.name, 64)} v${field(statement.agent.version)}`);
  if (statement.uncertainRuns.length > 0) writeLine(io.stdout, `  note: ${statement.uncertainRuns.length} run(s) had an unknown outcome when exported: ${field(statement.uncertainRuns.join(', '), 2_000)}`);
}

/** FILE and --signer, as `verify-bundle` and `review` take them. */
export function parseBundleArgs(command: Command, args: readonly string[]): { file: string; json: boolean; options: { expectedSigner?: string } } {
  const { values, positionals } = parseCommandArgs(command, args, { json: COMMON_OPTIONS.json, signer: { type: 'string' } });
  const file = requirePositional(command, positionals, 0, 'a bundle file');
  return { file, json: values.json, options: values.signer === undefined ? {} : { expectedSigner: parseSigner(values.signer).fingerprint } };
}

export const verifyBundleCommand: Command = {
  name: 'verify-bundle',
  appless: true,
  usage: 'ward verify-bundle FILE [--signer KEYFILE|FINGERPRINT] [--json]',
  async run(args, { io }) {
    const { file, json, options } = parseBundleArgs(this, args);
    const verdict = await verifyBundle(file, options);
    if (json) writeJson(io.stdout, verdict);
    else describeVerdict(io, verdict);
    return verdict.ok ? EXIT.ok : EXIT.verifyFailed;
  },
};
