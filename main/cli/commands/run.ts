import path from 'node:path';
import { escapeOneLine } from '../../../common/display.js';
import { MAX_PROMPT_CHARS } from '../../../common/limits.js';
import { traceMark } from '../../base/trace.js';
import { EXIT, type ExitCode, WardError } from '../../base/errors.js';
import type { RunHandle, RunOutcome, RunService } from '../../app/runs/run-service.js';
import type { WardApp } from '../../app/ward-app.js';
import type { ConversationService, JournalEvent } from '../../app/conversations.js';
import { parsePermissionFlags, splitPermissionArgs } from '../../app/grants.js';
import type { NamespaceStore } from '../../app/namespaces.js';
import { COMMON_OPTIONS, parseCommandArgs, type Command } from '../command.js';
import { formatLive, newStreamedText, type StreamedText } from '../format-event.js';
import { readBoundedStdin, writeJson, writeLine, type CliIo } from '../io.js';

const STDIN_TIMEOUT_MS = 10 * 60_000;
/** How often the journal is re-read when following a run another Ward process owns. */
const FOLLOW_POLL_MS = 200;
/** How many short polls an attached `ward run` waits for the owner's run_finished (an uncertain run has none). */
const FINISH_WAIT_ATTEMPTS = 20;

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const STOP_REASON: Readonly<Record<(typeof STOP_SIGNALS)[number], string>> = {
  SIGINT: 'stopped by the user (Ctrl-C)',
  SIGTERM: 'Ward was asked to end (SIGTERM)',
  SIGHUP: 'the terminal was closed (SIGHUP)',
};

const EXIT_FOR_STATE: Readonly<Record<string, ExitCode>> = {
  succeeded: EXIT.ok,
  failed: EXIT.failed,
  stopped: EXIT.stopped,
  uncertain: EXIT.uncertain,
};

function show(io: CliIo, json: boolean, event: JournalEvent, streamed: StreamedText): void {
  if (io.stdout.destroyed) return; // the reader went away (EPIPE); the run is being stopped
  if (json) return writeJson(io.stdout, event);
  const line = formatLive(event, streamed);
  if (line !== null) (line.stream === 'stdout' ? io.stdout : io.stderr).write(line.text);
}

/** Prints the run's events as they are committed; for a run owned by another process, by polling. */
function follow(conversations: ConversationService, store: NamespaceStore, handle: RunHandle, io: CliIo, json: boolean): () => Promise<void> {
  let finished = false;
  const streamed = newStreamedText();
  const print = (event: JournalEvent) => {
    if (event.runId !== handle.runId) return;
    if (event.type === 'run_finished') finished = true;
    show(io, json, event, streamed);
  };
  if (!handle.attached || handle.childPid() !== undefined) {
    const unsubscribe = conversations.subscribe(store, handle.conversationId, handle.cursor, print);
    return async () => unsubscribe();
  }
  let cursor = handle.cursor;
  const poll = () => {
    for (const event of conversations.events(store, handle.conversationId, cursor).events) {
      cursor = event.seq;
      print(event);
    }
  };
  poll();
  const timer = setInterval(poll, FOLLOW_POLL_MS);
  return async () => {
    clearInterval(timer);
    // The owning process writes run_finished just after the final state: wait for it, briefly.
    for (let attempt = 0; attempt < FINISH_WAIT_ATTEMPTS && !finished; attempt += 1) {
      poll();
      if (!finished) await new Promise((resolve) => setTimeout(resolve, FOLLOW_POLL_MS / 4));
    }
  };
}

/** The run loop and the namespace's store: run code, broker and gateway start while the store opens (issue 29); a failure closes them with the app. */
async function openRuns(ward: WardApp, namespace: string | undefined): Promise<{ service: RunService; store: NamespaceStore }> {
  const starting = ward.runs();
  starting.catch(() => undefined);
  const store = ward.namespaces.fromFlag(namespace);
  traceMark('store-open');
  ward.prepareRun(store.namespace);
  const service = await starting;
  traceMark('runs-ready');
  return { service, store };
}

/** The prompt after `--`, else piped on stdin (bounded in size and time). */
async function promptOf(positionals: readonly string[], io: CliIo, usage: string): Promise<string> {
  const given = positionals.join(' ');
  if (given !== '') return given;
  if (io.stdin.isTTY) throw new WardError('usage', `no prompt: give it after -- or pipe it on stdin\nusage: ${usage}`);
  // UTF-8 takes at most 4 bytes a character; the run service counts the characters.
  // `echo "…" | ward run` ends the prompt with a newline the person did not mean as part of it.
  return (await readBoundedStdin(io.stdin, { what: 'the prompt', maxBytes: MAX_PROMPT_CHARS * 4, timeoutMs: STDIN_TIMEOUT_MS })).replace(/\s+$/, '');
}

export const runCommand: Command = {
  name: 'run',
  usage: 'ward run [--namespace NS] [--conversation ID | --new] [--agent NAME] [--workspace DIR] [--request-id ID] [--allow-KIND=LIST…] [--deny-KIND=LIST…] [--json] [-- PROMPT]',
  // A newcomer's first question is where the model is and which key is used: say it here.
  details: [
    'grants (none by default): --allow-read=PATHS --allow-write=PATHS --allow-run=COMMANDS',
    '  --allow-net=HOSTS --allow-env=NAMES --allow-mcp=SERVER/TOOL, and the same with --deny- (deny wins)',
    'where the model is (unless the namespace has a model profile, see "ward doctor"):',
    "  WARD_MODEL_BASE_URL  the Messages API endpoint: Anthropic's by default, or a company gateway's https URL",
    '  WARD_MODEL           the model name',
    'the key: the one "ward provider set-key" stored for the namespace, else ANTHROPIC_API_KEY or',
    '  CLAUDE_CODE_OAUTH_TOKEN from the environment ("ward doctor" shows which is used)',
  ].join('\n'),
  async run(args, { io, app }) {
    // Deno-style grants for this turn; relative paths are relative to where `ward run` was started.
    const { permissionArgs, otherArgs } = splitPermissionArgs(args);
    const cwd = io.origin?.cwd ?? process.cwd();
    const permissions = parsePermissionFlags(permissionArgs, cwd);
    const { values, positionals } = parseCommandArgs(this, otherArgs, {
      ...COMMON_OPTIONS,
      conversation: { type: 'string', short: 'c' },
      new: { type: 'boolean', default: false },
      agent: { type: 'string', short: 'a' },
      workspace: { type: 'string' },
      'request-id': { type: 'string' },
    });
    if (values.conversation !== undefined && values.new) throw new WardError('usage', `give --conversation or --new, not both\nusage: ${this.usage}`);
    const prompt = await promptOf(positionals, io, this.usage);
    const ward = app();
    const { service, store } = await openRuns(ward, values.namespace);
    const ns = store.namespace;
    let stopFollowing: (() => Promise<void>) | undefined;
    let interrupts = 0;
    let handle: RunHandle | undefined;
    let settled = false;
    // The run may have ended a moment ago: then there is nothing to stop.
    const stopQuietly = (reason: string) => {
      try {
        void service.stop(handle!.runId, reason).catch(() => undefined);
      } catch {
        // not running any more
      }
    };
    // Ctrl-C, a closed terminal (HUP) and a TERM all stop the turn (R6), each journaled for what it was.
    const onSignal = (signal: (typeof STOP_SIGNALS)[number]) => {
      if (handle === undefined || handle.attached) return;
      interrupts += 1;
      if (signal === 'SIGINT' && interrupts === 1) writeLine(io.stderr, 'ward: stopping the turn (Ctrl-C again to kill it now)');
      stopQuietly(interrupts === 1 ? STOP_REASON[signal] : 'killed by the user (a second signal)');
    };
    // `ward run --json | head -1`: when the reader goes away, stop the turn instead of crashing
    // on EPIPE and leaving the child behind.
    const onOutputError = () => {
      if (handle !== undefined && !handle.attached) stopQuietly('the output pipe was closed');
    };
    io.stdout.on('error', onOutputError);
    const signals = io.origin?.signals ?? process;
    for (const signal of STOP_SIGNALS) signals.on(signal, onSignal);
    const launch = {
      ...(values.agent === undefined ? {} : { agent: values.agent }),
      ...(values.workspace === undefined ? {} : { workspace: path.resolve(cwd, values.workspace) }),
      permissions,
    };
    try {
      // Preflight first: a run that would be refused leaves no conversation or run behind.
      handle = await service.start({
        namespace: ns,
        ...(values.conversation === undefined ? {} : { conversationId: values.conversation }),
        ...launch,
        ...(io.origin === undefined ? {} : { prompter: io.origin.prompter }),
        ...(values['request-id'] === undefined ? {} : { requestId: values['request-id'] }),
        prompt,
      });
      if (!values.json) writeLine(io.stderr, `ward: conversation ${handle.conversationId}, run ${handle.runId}${handle.attached ? ' (attached to the run this request started)' : ''}`);
      stopFollowing = follow(ward.conversations, store, handle, io, values.json);
      const outcome: RunOutcome = await handle.done;
      settled = true;
      // In the service, the next new conversation like this one finds its CLI started (issue 29).
      if (io.origin !== undefined && values.conversation === undefined) void service.prestartNew({ namespace: ns, ...launch }).catch(() => undefined);
      await stopFollowing();
      stopFollowing = undefined;
      if (!values.json) writeLine(io.stderr, `ward: ${outcome.state}${outcome.reason === null ? '' : `: ${escapeOneLine(outcome.reason, 2_000)}`}`);
      return EXIT_FOR_STATE[outcome.state] ?? EXIT.failed;
    } finally {
      await stopFollowing?.();
      // This turn only, if it still runs: in the `ward` service other turns and kept CLIs are not this command's.
      if (handle !== undefined && !handle.attached && !settled) stopQuietly('ward run ended before its turn');
      for (const signal of STOP_SIGNALS) signals.off(signal, onSignal);
      io.stdout.off('error', onOutputError);
    }
  },
};

/** R8: a person settles an uncertain run after checking what its tool calls did; this frees the conversation. */
export const reconcileCommand: Command = {
  name: 'reconcile',
  usage: 'ward reconcile RUN_ID --outcome failed|stopped|succeeded --note TEXT [--namespace NS] [--json]',
  async run(args, { io, app }) {
    const { values, positionals } = parseCommandArgs(this, args, { ...COMMON_OPTIONS, outcome: { type: 'string' }, note: { type: 'string' } });
    const runId = positionals[0];
    if (runId === undefined || values.outcome === undefined || values.note === undefined || values.note.trim() === '') {
      throw new WardError('usage', `give the run id, --outcome and a --note saying what you checked\nusage: ${this.usage}`);
    }
    const ward = app();
    const run = ward.conversations.reconcile(ward.namespaces.fromFlag(values.namespace), runId, values.outcome as RunOutcome['state'], values.note);
    if (values.json) writeJson(io.stdout, run);
    else writeLine(io.stdout, `run ${run.id} recorded as ${run.state}; conversation ${run.conversationId} takes prompts again`);
    return EXIT.ok;
  },
};
