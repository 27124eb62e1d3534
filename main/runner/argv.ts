/**
 * R3/R4: the one place the child's argv is written. Everything is an option before `--`; the
 * prompt never appears here (it goes through stdin), nor does any secret (the capability is in
 * the private mcp.json whose path is passed). No permission bypass flag exists in this builder.
 */
export const WARD_SERVER = 'ward';

export interface CliArgsInput {
  /** The native session id (a UUID). */
  readonly sessionId: string;
  /** First turn: `--session-id`; later turns: `--resume` (R4). */
  readonly resume: boolean;
  /**
   * A rewound conversation's first turn: the CLI resumes `fromSessionId` up to message
   * `atMessage` as a fork whose id is `sessionId`; the session forked from stays as it was.
   */
  readonly fork?: { readonly fromSessionId: string; readonly atMessage: string } | null;
  readonly mcpConfigPath: string;
  readonly instructionsPath: string;
  readonly model: string;
  /** Exposed names of the agent's pinned MCP tools, pre-allowed as `mcp__ward__<name>`. */
  readonly pinnedTools: readonly string[];
  /** Granted native tools (none by default). */
  readonly nativeTools?: readonly string[];
  /** Path- and command-scoped CLI rules rendered from the grants (main/permissions renderCliOptions). */
  readonly allowedRules?: readonly string[];
  readonly disallowedRules?: readonly string[];
  /** Tools the CLI must ask Ward about on every call (an ask rule beats its own allows). */
  readonly askTools?: readonly string[];
}

/** A tool name (MCP names may hold "-", which the pinned CLI accepts), optionally with a scope in parentheses. */
const CLI_RULE = /^[A-Za-z][A-Za-z0-9_-]*(\([^()\n]{1,4200}\))?$/;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function mcpToolName(exposedName: string): string {
  return `mcp__${WARD_SERVER}__${exposedName}`;
}

/**
 * The child's `--settings`. `skipWebFetchPreflight`: before each fetch the CLI asks Anthropic
 * whether the domain is blocklisted and refuses the fetch when it cannot; the sandbox lets the
 * child reach only granted hosts, so that lookup always failed, and it would tell Anthropic every
 * host fetched. Which hosts WebFetch may reach is Ward's grants' call.
 */
function childSettings(askTools: readonly string[]): Record<string, unknown> {
  return { skipWebFetchPreflight: true, ...(askTools.length > 0 ? { permissions: { ask: askTools } } : {}) };
}

function sessionArgs(input: CliArgsInput): string[] {
  const { fork } = input;
  if (fork) return ['--resume', fork.fromSessionId, '--fork-session', '--resume-session-at', fork.atMessage, '--session-id', input.sessionId];
  return [input.resume ? '--resume' : '--session-id', input.sessionId];
}

export function buildCliArgs(input: CliArgsInput): string[] {
  for (const id of [input.sessionId, ...(input.fork ? [input.fork.fromSessionId, input.fork.atMessage] : [])]) {
    if (!UUID.test(id)) throw new Error(`session and message ids must be lowercase UUIDs, got ${JSON.stringify(id)}`);
  }
  for (const name of [...input.pinnedTools, ...(input.nativeTools ?? []), ...(input.askTools ?? [])]) {
    if (!TOOL_NAME.test(name)) throw new Error(`invalid tool name ${JSON.stringify(name)}`);
  }
  if (input.model === '' || input.model.startsWith('-')) throw new Error(`invalid model name ${JSON.stringify(input.model)}`);
  for (const rule of [...(input.allowedRules ?? []), ...(input.disallowedRules ?? [])]) {
    if (!CLI_RULE.test(rule) || rule.includes(',')) throw new Error(`invalid permission rule ${JSON.stringify(rule.slice(0, 100))}`);
  }
  const args = [
    '-p',
    '--output-format',
    'stream-json',
    '--verbose',
    // Text deltas as `stream_event` lines, so the answer streams; the full `assistant` line still follows.
    '--include-partial-messages',
    ...sessionArgs(input),
    '--strict-mcp-config',
    '--mcp-config',
    input.mcpConfigPath,
    '--tools',
    (input.nativeTools ?? []).join(','),
    '--setting-sources',
    '',
    '--disable-slash-commands',
    // Permission questions come to Ward as control requests on stdout (`can_use_tool`), answered on stdin.
    '--permission-prompt-tool',
    'stdio',
  ];
  const allowed = [...input.pinnedTools.map(mcpToolName), ...(input.allowedRules ?? [])];
  if (allowed.length > 0) args.push('--allowedTools', allowed.join(','));
  if ((input.disallowedRules ?? []).length > 0) args.push('--disallowedTools', input.disallowedRules!.join(','));
  args.push('--settings', JSON.stringify(childSettings(input.askTools ?? [])));
  args.push('--append-system-prompt-file', input.instructionsPath, '--model', input.model);
  // Turns and permission answers come on stdin as stream-json lines, never as an argument (issue 19).
  args.push('--input-format', 'stream-json');
  return args;
}
