/** Scripted model steps the sandbox tests share: a Bash tool call, and the closing answer. */
import type { ScriptStep } from '../fixtures/model-provider/provider.js';

export function bash(command: string): ScriptStep {
  return { blocks: [{ type: 'tool_use', name: 'Bash', input: { command, description: 'run it' } }] };
}

export const DONE: ScriptStep = { blocks: [{ type: 'text', text: 'done' }] };
