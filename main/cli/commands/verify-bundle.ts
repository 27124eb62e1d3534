import { EXIT } from '../../base/errors.js';
import { parseSigner, verifyBundle, type BundleVerdict } from '../../export/bundle.js';
import { COMMON_OPTIONS, parseCommandArgs, requirePositional, type Command } from '../command.js';
import { writeJson, writeLine, type CliIo } from '../io.js';

/** What a bundle is, in a few lines: verdict first. */
export function describeVerdict(io: CliIo, verdict: BundleVerdict): void {
  const { statement } = verdict;
  if (verdict.ok) writeLine(io.stdout, `ok: ${verdict.file} is intact and signed`);
  else writeLine(io.stdout, `NOT VERIFIED: ${verdict.firstBadSeq === null ? '' : `first bad event is #${verdict.firstBadSeq}: `}${verdict.problems[0]}`);
  for (const problem of verdict.problems.slice(1)) writeLine(io.stdout, `  also: ${problem}`);
  writeLine(io.stdout, `  conversation ${statement.conversationId} (${JSON.stringify(statement.title)}): ${verdict.events} events, chain head ${statement.chainHead}`);
  const trust = verdict.expectedSigner === null ? 'the key inside the bundle; pass --signer to require a key you trust' : verdict.expectedSigner === verdict.signer ? 'the expected signer' : `expected ${verdict.expectedSigner}`;
  writeLine(io.stdout, `  signature ${verdict.signature} by ${verdict.signer} (${trust})`);
  writeLine(io.stdout, `  exported ${statement.exportedAt} by Ward ${statement.wardVersion} (Claude CLI ${statement.cliVersion}), agent ${statement.agent.name} v${statement.agent.version}`);
  if (statement.uncertainRuns.length > 0) writeLine(io.stdout, `  note: ${statement.uncertainRuns.length} run(s) had an unknown outcome when exported: ${statement.uncertainRuns.join(', ')}`);
}

/** FILE and --signer, as `verify-bundle` and `review` take them. */
export function parseBundleArgs(command: Command, args: readonly string[]): { file: string; json: boolean; options: { expectedSigner?: string } } {
  const { values, positionals } = parseCommandArgs(command, args, { json: COMMON_OPTIONS.json, signer: { type: 'string' } });
  const file = requirePositional(command, positionals, 0, 'a bundle file');
  return { file, json: values.json, options: values.signer === undefined ? {} : { expectedSigner: parseSigner(values.signer).fingerprint } };
}

export const verifyBundleCommand: Command = {
  name: 'verify-bundle',
  usage: 'ward verify-bundle FILE [--signer KEYFILE|FINGERPRINT] [--json]',
  async run(args, { io }) {
    const { file, json, options } = parseBundleArgs(this, args);
    const verdict = await verifyBundle(file, options);
    if (json) writeJson(io.stdout, verdict);
    else describeVerdict(io, verdict);
    return verdict.ok ? EXIT.ok : EXIT.verifyFailed;
  },
};
