/**
 * Permission decisions and servers' requests for input, in Ward's words: one line each for the
 * transcripts, `ward review` and `ward replay`. Each line is parts: Ward's own words as text, and
 * what came from a model, a tool, a server or a person as `foreign` parts, which every reader shows
 * inert (a code span, escaped HTML, an escaped terminal line).
 * Shared by main and the renderer: no Node, no Electron.
 */
import type { EventOf } from './events.js';

export type WordPart = { readonly text: string } | { readonly foreign: string };

const words = (text: string): WordPart => ({ text });
const foreign = (text: string): WordPart => ({ foreign: text });

/** Written by main/permissions/run-permissions.ts when a run ends with a question open. */
const RUN_ENDED = 'the run ended before anyone answered';
/** Written when the broker checks a call the person approved through the CLI's approval tool. */
const APPROVED_THROUGH_TOOL = 'approved once through the approval tool';

const PERSON_ALLOWED: Record<'once' | 'conversation' | 'always', string> = {
  once: 'allowed once by you',
  conversation: 'allowed for this conversation by you',
  always: 'allowed for this agent by you',
};

/** "2 min", "90 s": how long a question waited. */
export function waited(ms: number): string {
  const seconds = Math.round(ms / 1000);
  return seconds >= 60 && seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`;
}

/** Who or what decided, and how, as the record says (P4). */
function outcome(payload: EventOf<'permission_decision'>['payload']): WordPart[] {
  const { answerer, decision, reason } = payload;
  const verb = decision === 'allow' ? 'allowed' : 'denied';
  switch (answerer.by) {
    case 'person':
      if (answerer.answer === 'deny' || decision === 'deny') return [words('denied by you')];
      return [words(`${PERSON_ALLOWED[answerer.answer]}${reason === APPROVED_THROUGH_TOOL ? ', checked again at the call' : ''}`)];
    case 'rule':
      return [words(`${verb} by the grant `), foreign(answerer.rule)];
    case 'policy':
      return [words(`${verb} by the admin policy: `), foreign(reason)];
    case 'timeout':
      return [words(`no answer in ${waited(answerer.afterMs)}: denied`)];
    case 'no_one':
      return reason === RUN_ENDED ? [words(`${RUN_ENDED}: denied`)] : [words('no one could be asked: denied, '), foreign(reason)];
    case 'refused':
      return [words('denied by Ward without asking: '), foreign(reason)];
  }
}

/** "Permission: Bash `git status` — allowed once by you". */
export function decisionParts({ payload }: EventOf<'permission_decision'>): WordPart[] {
  const what = payload.command ?? payload.value;
  return [words('Permission: '), foreign(payload.tool), ...(what === null || what === '' ? [] : [words(' '), foreign(what)]), words(' — '), ...outcome(payload)];
}

const ELICITATION_ACTION: Record<EventOf<'elicitation_answered'>['payload']['action'], string> = { accept: 'answered', decline: 'declined', cancel: 'cancelled' };
const ELICITATION_BY: Record<EventOf<'elicitation_answered'>['payload']['by'], string> = {
  person: 'by you',
  timeout: 'because no one answered in time',
  no_one: 'because no one could be asked',
  ended: 'because the run ended',
};

/** A server's request for input, its answer, or Ward's refusal to show it. */
export function elicitationParts(event: EventOf<'elicitation_requested' | 'elicitation_answered' | 'elicitation_refused'>): WordPart[] {
  switch (event.type) {
    case 'elicitation_requested': {
      const { server, mode, message, urlOrigin, continuesCall } = event.payload;
      const page = mode === 'url' && urlOrigin !== null ? [words(' (a page at '), foreign(urlOrigin), words(')')] : [];
      const continues = continuesCall === true ? [words(' — the call waits, and continues with the answer')] : [];
      return [words('Request for input: '), foreign(server), words(' asks '), foreign(message), ...page, ...continues];
    }
    case 'elicitation_answered': {
      const { server, action, by, content } = event.payload;
      const given = action === 'accept' && content !== null ? [words(' with '), foreign(JSON.stringify(content))] : [];
      return [words('Request for input from '), foreign(server), words(` — ${ELICITATION_ACTION[action]} ${ELICITATION_BY[by]}`), ...given];
    }
    case 'elicitation_refused':
      return [words('Request for input from '), foreign(event.payload.server), words(' — not shown, Ward refused it: '), foreign(event.payload.reason)];
  }
}

/** The audit sink's change of state (issue 28), in the one wording the chat, `ward` and transcripts use. */
export function auditSinkLine({ payload }: EventOf<'audit_sink'>): string {
  const waiting = `${payload.waiting} event(s) waiting`;
  return payload.state === 'failing'
    ? `Audit sink failing since ${payload.failingSince}: ${payload.reason ?? 'no reason given'} (${waiting}, kept until it takes them)`
    : `Audit sink delivering again (failing since ${payload.failingSince}; ${waiting})`;
}
