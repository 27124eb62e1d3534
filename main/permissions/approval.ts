/**
 * The CLI's permission question (`--permission-prompt-tool stdio`: a `can_use_tool` control
 * request on its stdout) and Ward's answer, as RunPermissions decides them.
 */

/** A permission question of the CLI: the tool, its input and the tool_use block it answers. */
export interface ApprovalRequest {
  readonly toolName: string;
  readonly input: Record<string, unknown>;
  readonly toolUseId: string | null;
}

export type ApprovalDecision = { readonly behavior: 'allow'; readonly updatedInput: Record<string, unknown> } | { readonly behavior: 'deny'; readonly message: string };
