/** Turns of a conversation on a harness with warm sessions on (the desktop's way): the helpers warm-session tests share. */
import type { ScriptStep } from '../../fixtures/model-provider/provider.js';
import { startHarness, type Harness, type HarnessOptions } from './harness.js';

export const answer = (text: string): ScriptStep => ({ blocks: [{ type: 'text' as const, text }] });

export function warmHarness(script: Parameters<typeof startHarness>[0], options: HarnessOptions = {}): Promise<Harness> {
  return startHarness(script, { warmSessions: true, ...options });
}

/** One turn of the conversation (a new one without `conversationId`), to its end. */
export async function turn(h: Harness, prompt: string, conversationId?: string) {
  const handle = h.service.startTurn({ namespace: h.ns, prompt, ...(conversationId === undefined ? {} : { conversationId }) });
  const outcome = await handle.done;
  return { handle, outcome, pid: handle.childPid() };
}
