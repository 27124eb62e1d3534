/**
 * The desktop's IPC adapter: each contract channel is one service call (STYLE #5), plus the
 * bookkeeping only windows need — which window holds which subscription. Nothing here decides
 * anything a service does not; everything returned is renderer-visible (U3, C3).
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { IPC_ERROR_CODES, type IpcResult } from '../../preload/contract.js';
import { WardError } from '../base/errors.js';
import { desktopPath, desktopServerPaths } from '../base/process.js';
import { parseToolSelector } from '../app/agents.js';
import { toRunView } from '../app/conversations.js';
import type { ApprovalPort } from '../app/approvals.js';
import type { WardApp } from '../app/ward-app.js';
import type { Client } from './client.js';
import { dispatch, failure, type Handlers } from './dispatch.js';
import { senderRefusal, type SenderFacts } from './sender.js';

/** What a review window may call. */
const REVIEW_CHANNELS: ReadonlySet<string> = new Set(['review.get', 'review.events', 'links.openExternal']);

/** Asks the person, then opens the system browser; false when they declined. */
export type ExternalOpener = (url: URL) => Promise<boolean>;
/** Opens a sign-in page the person asked for (no extra confirmation; http/https only). */
export type SignInBrowser = (url: URL) => Promise<void>;
/** The system's folder dialog: the folder the person chose, or null when they cancelled. */
export type FolderPicker = () => Promise<string | null>;

export interface DesktopPorts {
  /** Approvals waiting for the person (the desktop's prompter). */
  readonly approvals?: ApprovalPort;
  readonly openExternal?: ExternalOpener;
  readonly openSignIn?: SignInBrowser;
  readonly pickFolder?: FolderPicker;
  /** Asks the person for a bundle file; null when they cancel. */
  readonly pickBundle?: () => Promise<string | null>;
  /** Shows an opened bundle in a review window of its own. */
  readonly showReview?: (reviewId: string) => void;
}

/** A window follows a few conversations at a time; more is a leak or abuse (L1). */
export const MAX_SUBSCRIPTIONS_PER_CLIENT = 64;

/** Only http and https links may leave the app, and only as parsed URLs. */
export function parseExternalUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WardError('usage', 'not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new WardError('usage', `only http and https links open outside Ward, not ${url.protocol.slice(0, 20)}`);
  }
  return url;
}

interface Subscription {
  readonly clientId: string;
  stop: () => void;
}

export class DesktopIpc {
  private readonly subscriptions = new Map<string, Subscription>();

  constructor(
    private readonly app: WardApp,
    private readonly ports: DesktopPorts = {},
  ) {}

  /** Handlers for every contract channel; TypeScript checks none is missing. */
  readonly handlers: Handlers = {
    'namespaces.list': () => this.app.namespaces.list().map((name) => ({ name })),
    'namespaces.create': ({ name }) => ({ name: this.app.namespaces.create(name).name }),
    'conversations.list': ({ namespace, query }) => this.app.conversations.list(this.store(namespace), query),
    'conversations.get': ({ namespace, conversationId }) => this.app.conversations.view(this.store(namespace), conversationId),
    'conversations.start': async ({ namespace, agentName, prompt, requestId, workspace, access = 'ask' }) => {
      const store = this.store(namespace);
      const handle = await this.app.conversations.start(await this.app.runs(), store, { agentName, prompt, requestId, ...(workspace === undefined ? {} : { project: { workspace, access } }) });
      // The turn runs on in the background; the window follows the journal.
      void handle.done.catch(() => undefined);
      return { conversationId: handle.conversationId, runId: handle.runId, attached: handle.attached };
    },
    'journal.subscribe': ({ namespace, conversationId, afterSeq, tail }, client) => {
      const store = this.store(namespace);
      const tailFrom = tail === undefined ? null : this.app.conversations.tailFrom(store, conversationId, afterSeq, tail);
      const { subscriptionId } = this.subscribe(client, (id) =>
        this.app.conversations.follow(
          store,
          conversationId,
          afterSeq,
          {
            events: (events) => client.push({ kind: 'journal', subscriptionId: id, events }),
            ended: (error) => {
              console.error('ward: journal replay ended', error);
              this.subscriptions.delete(id);
            },
          },
          tailFrom,
        ),
      );
      return { subscriptionId, tailFrom };
    },
    'journal.unsubscribe': ({ subscriptionId }, client) => {
      const subscription = this.subscriptions.get(subscriptionId);
      if (subscription === undefined || subscription.clientId !== client.id) throw new WardError('not_found', `no subscription ${subscriptionId}`);
      subscription.stop();
      this.subscriptions.delete(subscriptionId);
      return null;
    },
    'runs.send': async ({ namespace, conversationId, requestId, prompt }) => {
      const store = this.store(namespace);
      const handle = await (await this.app.runs()).start({ namespace: store.namespace, conversationId, requestId, prompt });
      // The turn runs on in the background; the window follows the journal.
      void handle.done.catch(() => undefined);
      return { runId: handle.runId, attached: handle.attached };
    },
    'runs.prepare': async ({ namespace, conversationId }) => ({ outcome: await (await this.app.runs()).prestart({ namespace: this.store(namespace).namespace, conversationId }) }),
    'runs.stop': async ({ namespace, runId }) => {
      const store = this.store(namespace);
      store.runs.get(runId);
      // Returns once the stop is requested; "Stopped" arrives through the journal after the drain.
      void (await this.app.runs()).stop(runId).catch(() => undefined);
      return toRunView(store.runs.get(runId));
    },
    'runs.reconcile': ({ namespace, runId, outcome, note }) => toRunView(this.app.conversations.reconcile(this.store(namespace), runId, outcome, note)),
    'changes.open': ({ namespace, conversationId, seq }) => this.app.changeViews.open(this.store(namespace), conversationId, seq),
    'changes.diff': ({ namespace, conversationId, seq, index }) => this.app.changeViews.diff(this.store(namespace), conversationId, seq, index),
    'changes.rewind': ({ namespace, conversationId, to, force, scope }) => this.app.changeViews.rewind(this.store(namespace), conversationId, to, force, scope),
    'approvals.list': ({ namespace }) => this.ports.approvals?.pending(this.store(namespace).namespace) ?? [],
    'approvals.answer': ({ namespace, approvalId, answer }) => {
      if (this.ports.approvals === undefined) throw new WardError('not_found', `no pending approval ${approvalId}`);
      this.ports.approvals.answer(this.store(namespace).namespace, approvalId, answer);
      return null;
    },
    'approvals.watch': ({ namespace }, client) => {
      const ns = this.store(namespace).namespace;
      const approvals = this.ports.approvals;
      return this.subscribe(client, (subscriptionId) => {
        const push = () => {
          if (this.subscriptions.has(subscriptionId)) client.push({ kind: 'approvals', subscriptionId, pending: approvals?.pending(ns) ?? [], elicitations: approvals?.elicitations(ns) ?? [] });
        };
        const stop = approvals?.onChange((changed) => {
          if (changed === ns.name) push();
        });
        setImmediate(push);
        return stop ?? (() => undefined);
      });
    },
    'elicitations.answer': async ({ namespace, elicitationId, action, content }) => {
      if (this.ports.approvals === undefined) throw new WardError('not_found', `no pending request for input ${elicitationId}`);
      const url = this.ports.approvals.answerElicitation(this.store(namespace).namespace, elicitationId, action, content);
      // The person chose to open the server's page: no second confirmation (main opens its own copy of the URL).
      if (url !== null) {
        if (this.ports.openSignIn === undefined) throw new WardError('unavailable', 'opening pages needs a browser, which is not available here');
        await this.ports.openSignIn(parseExternalUrl(url.href));
      }
      return null;
    },
    'agents.list': async ({ namespace }) => (await this.app.agents()).views(this.store(namespace)),
    'agents.publish': async ({ namespace, name, instructions, keepTools, addTools = [] }) =>
      (await this.app.agents()).publishFromEditor(this.store(namespace), { name, instructions, keepTools, addTools: addTools.map(parseToolSelector) }),
    'agents.grant': async ({ namespace, name, effect, kind, entries }) => (await this.app.agents()).grant(this.store(namespace), name, effect, kind, entries),
    'agents.revokeGrant': async ({ namespace, name, grantId }) => (await this.app.agents()).revokeGrant(this.store(namespace), name, grantId),
    'connections.list': async ({ namespace }) => (await this.app.connections()).windowViews(this.store(namespace)),
    'connections.add': async ({ namespace, name, url, clientId, clientSecret }) => {
      const connections = await this.app.connections();
      return connections.windowView(this.store(namespace), await connections.add(this.store(namespace), { name, transport: 'http', url, clientId }, {}, clientSecret));
    },
    'connections.addLocal': async ({ namespace, name, command, args, secrets, sandbox }) => {
      const home = os.homedir();
      const confined = sandbox === undefined ? {} : { sandbox: { net: sandbox.net, folder: sandbox.folder === undefined ? null : desktopPath(sandbox.folder, 'the folder', home) } };
      const spec = { transport: 'stdio', name, ...desktopServerPaths(command, args, home), secretEnv: secrets.map((secret) => secret.name), ...confined };
      const values = Object.fromEntries(secrets.map((secret) => [secret.name, secret.value]));
      const connections = await this.app.connections();
      return connections.windowView(this.store(namespace), await connections.add(this.store(namespace), spec, values));
    },
    'connections.check': async ({ namespace, name }) => {
      const connections = await this.app.connections();
      return connections.windowView(this.store(namespace), await connections.check(this.store(namespace), name));
    },
    'connections.changeTool': async ({ namespace, name, action, tool }) => {
      const connections = await this.app.connections();
      const { view } = await connections.tools(this.store(namespace), name, { action, tool });
      return connections.windowView(this.store(namespace), view);
    },
    'connections.signIn': async ({ namespace, name }) => {
      const open = this.ports.openSignIn;
      if (open === undefined) throw new WardError('unavailable', 'signing in needs a browser, which is not available here');
      const connections = await this.app.connections();
      return connections.windowView(this.store(namespace), await connections.signIn(this.store(namespace), name, { openBrowser: (url) => open(parseExternalUrl(url.href)) }));
    },
    'connections.signOut': async ({ namespace, name }) => {
      const connections = await this.app.connections();
      return connections.windowView(this.store(namespace), await connections.signOut(this.store(namespace), name));
    },
    'connections.remove': async ({ namespace, name }) => {
      await (await this.app.connections()).remove(this.store(namespace), name);
      return null;
    },
    'settings.get': ({ namespace }) => this.app.settings.view(this.store(namespace)),
    'settings.setModelProvider': ({ namespace, baseUrl, model }) => {
      const store = this.store(namespace);
      this.app.settings.setModelProvider(store, baseUrl, model);
      return this.app.settings.view(store);
    },
    'settings.setKey': async ({ namespace, key }) => {
      const store = this.store(namespace);
      await this.app.settings.setKey(store.namespace, key);
      return this.app.settings.view(store);
    },
    'settings.testProvider': ({ namespace }) => this.app.settings.testProvider(this.store(namespace)),
    'settings.clearKey': async ({ namespace }) => {
      const store = this.store(namespace);
      await this.app.settings.clearKey(store.namespace);
      return this.app.settings.view(store);
    },
    'policy.get': () => this.app.policyView(),
    'search.query': ({ namespace, query, offset }) => this.app.search.search(this.store(namespace), query, { offset: offset ?? 0 }),
    'usage.summary': ({ namespace, since }) => this.app.usage.summary(this.store(namespace), since),
    'review.open': async () => {
      if (this.ports.pickBundle === undefined) throw new WardError('unavailable', 'opening a bundle needs a file dialog, which is not available here');
      const file = await this.ports.pickBundle();
      if (file === null) return null;
      const view = await this.app.reviews.openFile(file);
      this.ports.showReview?.(view.reviewId);
      return view;
    },
    'review.get': ({ reviewId }) => this.app.reviews.view(reviewId),
    'review.events': ({ reviewId, page }) => this.app.reviews.events(reviewId, page),
    'links.openExternal': async ({ url }) => {
      const parsed = parseExternalUrl(url);
      if (this.ports.openExternal === undefined) throw new WardError('unavailable', 'opening links is not available here');
      return { opened: await this.ports.openExternal(parsed) };
    },
    'folders.pick': async () => {
      if (this.ports.pickFolder === undefined) throw new WardError('unavailable', 'choosing a folder is not available here');
      return { path: await this.ports.pickFolder() };
    },
  };

  /**
   * One call from a window (U2): the sender is checked before anything else, then the channel
   * and payload (dispatch). Electron main calls this for every channel of the contract.
   */
  invokeFrom(sender: SenderFacts, client: Client, channel: unknown, payload: unknown): Promise<IpcResult<unknown>> {
    const refusal = senderRefusal(sender);
    if (refusal !== null) {
      const shown = typeof channel === 'string' ? channel.slice(0, 80) : typeof channel;
      return Promise.resolve(failure(IPC_ERROR_CODES.forbiddenSender, `${shown}: ${refusal}`));
    }
    return this.dispatch(client, channel, payload);
  }

  /** The contract for one client: a review window gets the review channels only. */
  dispatch(client: Client, channel: unknown, payload: unknown): Promise<IpcResult<unknown>> {
    if (client.reviewOnly === true && !(typeof channel === 'string' && REVIEW_CHANNELS.has(channel))) {
      const shown = typeof channel === 'string' ? channel.slice(0, 80) : typeof channel;
      return Promise.resolve(failure(IPC_ERROR_CODES.forbiddenSender, `${shown}: a review window reaches only the bundle it shows`));
    }
    return dispatch(this.handlers, client, channel, payload);
  }

  /** Ends every subscription a window held (it closed or reloaded). */
  releaseClient(clientId: string): void {
    for (const [id, subscription] of this.subscriptions) {
      if (subscription.clientId === clientId) {
        subscription.stop();
        this.subscriptions.delete(id);
      }
    }
  }

  subscriptionCount(): number {
    return this.subscriptions.size;
  }

  private store(namespace: string) {
    return this.app.namespaces.open(namespace);
  }

  /** Registers a window's subscription (bounded per window); the id goes back before the first push. */
  private subscribe(client: Client, start: (subscriptionId: string) => () => void): { subscriptionId: string } {
    let held = 0;
    for (const subscription of this.subscriptions.values()) if (subscription.clientId === client.id) held++;
    if (held >= MAX_SUBSCRIPTIONS_PER_CLIENT) {
      throw new WardError('usage', `this window already holds ${MAX_SUBSCRIPTIONS_PER_CLIENT} subscriptions; unsubscribe before adding more`);
    }
    const subscriptionId = randomUUID();
    const subscription: Subscription = { clientId: client.id, stop: () => undefined };
    this.subscriptions.set(subscriptionId, subscription);
    try {
      subscription.stop = start(subscriptionId);
    } catch (error) {
      this.subscriptions.delete(subscriptionId);
      throw error;
    }
    return { subscriptionId };
  }
}
