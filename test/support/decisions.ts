/**
 * Every kind of permission decision and request for input a turn journals (as
 * main/permissions/run-permissions.ts and main/app/runs/turn-questions.ts write them), each with
 * the one line a reader of a transcript, `ward review` or `ward replay` should see for it. In the
 * lines, `x` is a field that came from outside Ward, shown inert.
 */
import { journalEvent, type PayloadOf } from '../../common/events.js';

type Decision = PayloadOf<'permission_decision'>;

const AT = '2026-03-01T12:00:00.000Z';
const bash = { kind: 'run', value: 'git', tool: 'Bash', argumentsSummary: '{"command":"git status"}', command: 'git status', via: 'approval', at: AT } as const;
const read = { kind: 'read', value: '/work/notes.txt', tool: 'Read', argumentsSummary: '{"file_path":"/work/notes.txt"}', via: 'approval', at: AT } as const;
const net = { kind: 'net', value: 'api.example:443', tool: 'network', argumentsSummary: 'api.example:443', via: 'sandbox', at: AT } as const;

const decisions: ReadonlyArray<readonly [Decision, string]> = [
  [{ ...bash, decision: 'allow', answerer: { by: 'person', answer: 'once' }, reason: 'allowed by the person (once)' }, 'Permission: `Bash` `git status` — allowed once by you'],
  [{ ...read, decision: 'allow', answerer: { by: 'person', answer: 'conversation' }, reason: 'allowed by the person (conversation)' }, 'Permission: `Read` `/work/notes.txt` — allowed for this conversation by you'],
  [{ ...net, decision: 'allow', answerer: { by: 'person', answer: 'always' }, reason: 'allowed by the person (always)' }, 'Permission: `network` `api.example:443` — allowed for this agent by you'],
  [{ ...bash, decision: 'deny', answerer: { by: 'person', answer: 'deny' }, reason: 'denied by the person' }, 'Permission: `Bash` `git status` — denied by you'],
  [{ ...read, decision: 'allow', answerer: { by: 'rule', rule: 'allow read /work (conversation 1a2b3c4d)', grantId: '1a2b3c4d-0000' }, reason: 'allowed by allow read /work (conversation 1a2b3c4d)' }, 'Permission: `Read` `/work/notes.txt` — allowed by the grant `allow read /work (conversation 1a2b3c4d)`'],
  [{ ...net, decision: 'deny', answerer: { by: 'policy' }, reason: 'Example IT allows no network access to api.example:443' }, 'Permission: `network` `api.example:443` — denied by the admin policy: `Example IT allows no network access to api.example:443`'],
  [{ ...bash, decision: 'deny', answerer: { by: 'timeout', afterMs: 120_000 }, reason: 'no answer within 120 s' }, 'Permission: `Bash` `git status` — no answer in 2 min: denied'],
  [{ ...read, decision: 'deny', answerer: { by: 'no_one' }, reason: 'no grant covers read /work/notes.txt, and no one can be asked' }, 'Permission: `Read` `/work/notes.txt` — no one could be asked: denied, `no grant covers read /work/notes.txt, and no one can be asked`'],
  [{ ...read, decision: 'deny', answerer: { by: 'no_one' }, reason: 'the run ended before anyone answered' }, 'Permission: `Read` `/work/notes.txt` — the run ended before anyone answered: denied'],
  [{ ...read, decision: 'deny', answerer: { by: 'refused' }, reason: "/work/.ward is in Ward's own data folder, which an agent may never read" }, "Permission: `Read` `/work/notes.txt` — denied by Ward without asking: `/work/.ward is in Ward's own data folder, which an agent may never read`"],
  [{ ...bash, via: 'broker', decision: 'allow', answerer: { by: 'person', answer: 'once' }, reason: 'approved once through the approval tool' }, 'Permission: `Bash` `git status` — allowed once by you, checked again at the call'],
];

const elicitations = [
  [journalEvent('elicitation_requested', { elicitationId: 'e1', server: 'tracker', mode: 'form', message: 'Which project?', fields: [{ name: 'project', kind: 'string', required: true, sensitive: false }], urlOrigin: null }), 'Request for input: `tracker` asks `Which project?`'],
  [journalEvent('elicitation_answered', { elicitationId: 'e1', server: 'tracker', action: 'accept', by: 'person', content: { project: 'ward' } }), 'Request for input from `tracker` — answered by you with `{"project":"ward"}`'],
  [journalEvent('elicitation_answered', { elicitationId: 'e2', server: 'tracker', action: 'cancel', by: 'timeout', content: null }), 'Request for input from `tracker` — cancelled because no one answered in time'],
  [journalEvent('elicitation_refused', { server: 'tracker', reason: 'a field of type file is not supported' }), 'Request for input from `tracker` — not shown, Ward refused it: `a field of type file is not supported`'],
] as const;

/** The events in journal order, each with the line it should read as. */
export const ASKED: ReadonlyArray<{ readonly event: { readonly type: string; readonly payload: unknown }; readonly line: string }> = [
  ...decisions.map(([payload, line]) => ({ event: journalEvent('permission_decision', payload), line })),
  ...elicitations.map(([event, line]) => ({ event, line })),
];

/** A line as the HTML transcript has it: each `x` a <code> element. */
export function asHtml(line: string): string {
  return line.replace(/`([^`]*)`/g, '<code>$1</code>').replace(/'/g, '&#39;').replace(/"/g, '&quot;');
}
