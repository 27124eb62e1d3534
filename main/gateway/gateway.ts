/**
 * The model gateway (G1–G4): a loopback Messages-API endpoint in Ward's main process. The child
 * is given `http://127.0.0.1:PORT/runs/RUN` as its base URL and a per-run capability as its key;
 * the gateway checks both like the broker does (B1), swaps the capability for the namespace's
 * real credential (read at each call, never in the child), forwards to the provider and streams
 * the answer back as it arrives, with every credential it sent removed (relay.ts). It never logs
 * bodies or credentials; request size and time are bounded.
 */
import http from 'node:http';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { WardError, describeError } from '../base/errors.js';
import { readBoundedBody } from '../base/http-body.js';
import { traceMark } from '../base/trace.js';
import { capabilityHash, capabilityMatches, newCapability, startLoopbackServer, type LoopbackServer } from '../base/loopback.js';
import { redactSecrets } from '../base/secret-redaction.js';
import { providerHeaders, type ProviderCredential } from '../providers/provider-headers.js';
import { decodedBody, relayRedacted } from './relay.js';
import type { TokenUsage } from './usage.js';

/** One call through the gateway, as the journal records it (G4): never a body or a credential. */
export interface GatewayExchange {
  readonly path: string;
  /** The model the request named (the CLI may substitute one for the run's), or null when it named none. */
  readonly model: string | null;
  /** The provider's status, or 0 when it could not be reached. */
  readonly status: number;
  readonly durationMs: number;
  /** What went wrong, in Ward's words to follow "the model provider …", or null. */
  readonly problem: string | null;
  readonly usage: TokenUsage | null;
}

export interface ProviderRoute {
  readonly runId: string;
  /** The namespace's provider (already checked against the URL policy and the admin policy). */
  readonly baseUrl: string;
  /** Read at every call (G3): a token refreshed meanwhile is used. */
  readonly credential: () => Promise<ProviderCredential>;
  /** For a sign-in token: a fresh one after the provider answered 401, tried once (C5). */
  readonly refreshCredential?: () => Promise<ProviderCredential>;
  readonly onExchange: (exchange: GatewayExchange) => void;
  /** Why the admin policy refuses a model the child asks for, or null (G3: the child is not trusted to keep to its model). */
  readonly modelRefusal?: (model: string) => string | null;
  /**
   * A Messages request hands the model the results of these tool calls (its last message's
   * `tool_result` blocks): they have finished, and no other starts before the model answers.
   * Awaited before the request is forwarded; it must settle in bounded time, and a failure does not stop the call.
   */
  readonly toolCallsFinished?: (toolUseIds: readonly string[]) => Promise<void>;
}

export interface GatewayRegistration {
  /** `http://127.0.0.1:PORT/runs/RUN`: the child's ANTHROPIC_BASE_URL; names the run, holds no secret. */
  readonly url: string;
  /** 32 random bytes, base64url: the child's only key (G1). */
  readonly capability: string;
  /** The capability is dead from here on; calls under way finish. */
  close(): void;
}

const NOT_JSON = Symbol('not JSON');
type RequestModel = string | null | typeof NOT_JSON;

/** What Ward reads of a Messages-API request body: the `model` it names and the tool calls whose results its last message carries. */
interface RequestFacts {
  /** A string, null when it names none, or NOT_JSON. */
  readonly model: RequestModel;
  readonly toolResults: readonly string[];
}

function requestFacts(body: Buffer): RequestFacts {
  let parsed: { model?: unknown; messages?: unknown };
  try {
    parsed = JSON.parse(body.toString('utf8')) as typeof parsed;
  } catch {
    return { model: NOT_JSON, toolResults: [] };
  }
  const model = typeof parsed?.model === 'string' ? parsed.model : null;
  const last: unknown = Array.isArray(parsed?.messages) ? parsed.messages.at(-1) : undefined;
  if (typeof last !== 'object' || last === null || (last as { role?: unknown }).role !== 'user') return { model, toolResults: [] };
  const content = (last as { content?: unknown }).content;
  const toolResults = Array.isArray(content)
    ? content.flatMap((block: unknown) => {
        const { type, tool_use_id: id } = (block ?? {}) as { type?: unknown; tool_use_id?: unknown };
        return type === 'tool_result' && typeof id === 'string' ? [id] : [];
      })
    : [];
  return { model, toolResults };
}

export interface GatewayOptions {
  /** Request bodies above this are answered 413 (default 64 MiB: a long conversation with images). */
  readonly maxRequestBytes?: number;
  /** No byte from the provider for this long ends the call (default 10 min). */
  readonly idleTimeoutMs?: number;
  /** A call is ended after this long whatever happens (default 30 min, the turn's own bound). */
  readonly callTimeoutMs?: number;
}

/** The Messages-API paths the pinned CLI calls; anything else is refused. */
const FORWARDED = /^\/runs\/([A-Za-z0-9_-]{1,128})(\/v1\/messages(?:\/count_tokens)?)$/;
/** Hop-by-hop and Ward-owned headers: never forwarded in either direction. */
const DROPPED_REQUEST = new Set(['host', 'connection', 'keep-alive', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'content-length', 'authorization', 'x-api-key', 'origin', 'cookie', 'forwarded', 'x-forwarded-for', 'accept-encoding']);

interface Route extends ProviderRoute {
  readonly capabilityHash: Buffer;
}

function apiError(res: ServerResponse, status: number, type: string, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify({ type: 'error', error: { type, message } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

export class ModelGateway {
  private readonly routes = new Map<string, Route>();
  private readonly agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  private server!: LoopbackServer;
  private readonly maxRequestBytes: number;
  private readonly idleTimeoutMs: number;
  private readonly callTimeoutMs: number;

  private constructor(options: GatewayOptions) {
    this.maxRequestBytes = options.maxRequestBytes ?? 64 * 1024 * 1024;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 10 * 60_000;
    this.callTimeoutMs = options.callTimeoutMs ?? 30 * 60_000;
  }

  static async start(options: GatewayOptions = {}): Promise<ModelGateway> {
    const gateway = new ModelGateway(options);
    gateway.server = await startLoopbackServer((req, res) => {
      // Every credential read for this call: nothing sent back to the child may hold one (C3).
      const sent: string[] = [];
      gateway.handle(req, res, sent).catch((error: unknown) => apiError(res, 500, 'api_error', redactSecrets(`Ward's model gateway failed: ${describeError(error)}`, sent)));
    });
    return gateway;
  }

  get port(): number {
    return this.server.port;
  }

  register(route: ProviderRoute): GatewayRegistration {
    if (!/^[A-Za-z0-9_-]{1,128}$/.test(route.runId)) throw new WardError('invalid_config', `run id ${JSON.stringify(route.runId)} must be 1–128 of A-Z a-z 0-9 _ -`);
    if (this.routes.has(route.runId)) throw new WardError('invalid_config', `run ${route.runId} already has a model gateway route`);
    const capability = newCapability();
    const entry: Route = { ...route, capabilityHash: capabilityHash(capability) };
    this.routes.set(route.runId, entry);
    return {
      url: `http://127.0.0.1:${this.port}/runs/${route.runId}`,
      capability,
      close: () => {
        if (this.routes.get(route.runId) === entry) this.routes.delete(route.runId);
      },
    };
  }

  async close(): Promise<void> {
    this.routes.clear();
    await this.server.close();
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  private async handle(req: IncomingMessage, res: ServerResponse, sent: string[]): Promise<void> {
    const refusal = this.server.refusal(req);
    if (refusal !== null) return apiError(res, 403, 'permission_error', refusal);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const match = FORWARDED.exec(url.pathname);
    if (match === null) return apiError(res, 404, 'not_found_error', 'not a Messages-API path this gateway forwards');
    const route = this.routes.get(match[1]!);
    if (route === undefined) return apiError(res, 404, 'not_found_error', 'no such run');
    if (!capabilityMatches(presentedKey(req), route.capabilityHash)) return apiError(res, 401, 'authentication_error', 'missing or wrong run capability');
    if (req.method !== 'POST') return apiError(res, 405, 'invalid_request_error', 'only POST is forwarded');

    const started = performance.now();
    traceMark('gateway-request');
    const body = await readBoundedBody(req, this.maxRequestBytes);
    if (body === null) return apiError(res, 413, 'request_too_large', `the request exceeds ${this.maxRequestBytes} bytes`);
    const path = match[2]!;
    const { model, toolResults } = requestFacts(body);
    const refusedModel = this.modelRefusal(route, model);
    if (refusedModel !== null) return apiError(res, 403, 'permission_error', `Ward: ${refusedModel}`);
    if (path === '/v1/messages' && toolResults.length > 0) await route.toolCallsFinished?.(toolResults).catch(() => undefined);
    const target = new URL(route.baseUrl.replace(/\/$/, '') + path + url.search);
    const report = (status: number, problem: string | null, usage: TokenUsage | null) =>
      route.onExchange({ path, model: typeof model === 'string' ? model : null, status, durationMs: Math.round(performance.now() - started), problem, usage });

    const read = async (credential: Promise<ProviderCredential>): Promise<ProviderCredential> => {
      const value = await credential;
      sent.push(value.value);
      return value;
    };
    let credential = await read(route.credential());
    traceMark('gateway-forward');
    let upstream = await this.forward(req, target, body, credential);
    if (upstream.response?.statusCode === 401 && credential.kind === 'bearer' && route.refreshCredential !== undefined) {
      // C5: a sign-in token is refreshed and the call tried once more; nothing else is retried here.
      upstream.response.resume();
      credential = await read(route.refreshCredential());
      upstream = await this.forward(req, target, body, credential);
    }
    const response = upstream.response;
    traceMark('gateway-answer-head');
    if (response === undefined) {
      const problem = redactSecrets(upstream.problem ?? 'failed', sent);
      report(0, problem, null);
      // A name that does not resolve will not resolve on the CLI's next try: a 4xx it does not retry.
      if (upstream.unknownHost) return apiError(res, 400, 'invalid_request_error', `Ward: the model provider ${problem}`);
      return apiError(res, 502, 'api_error', `Ward: the model provider ${problem}`);
    }
    const decoded = decodedBody(response);
    if (decoded === null) {
      response.destroy();
      const problem = `answered in an encoding Ward cannot read (${redactSecrets(String(response.headers['content-encoding']), sent).slice(0, 40)}), so it cannot be checked for the key`;
      report(response.statusCode ?? 0, problem, null);
      return apiError(res, 502, 'api_error', `Ward: the model provider ${problem}`);
    }
    await relayRedacted(response, decoded, res, sent, (problem, usage) => report(response.statusCode ?? 0, problem, usage));
  }

  /** The policy's answer on the request's model; a body that names none is the provider's to judge. */
  private modelRefusal(route: Route, model: RequestModel): string | null {
    if (route.modelRefusal === undefined) return null;
    if (model === NOT_JSON) return 'the request is not JSON, so its model cannot be checked against the admin policy';
    return model === null ? null : route.modelRefusal(model);
  }

  /** One request to the provider; resolves with its response head, or why there is none. */
  private forward(req: IncomingMessage, target: URL, body: Buffer, credential: ProviderCredential): Promise<{ response?: IncomingMessage; problem: string | null; unknownHost?: boolean }> {
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) if (value !== undefined && !DROPPED_REQUEST.has(name)) headers[name] = value;
    Object.assign(headers, providerHeaders(credential));
    headers['content-length'] = String(body.length);
    // A compressed answer could carry the key past redaction: ask for it plain.
    headers['accept-encoding'] = 'identity';
    const client = target.protocol === 'https:' ? https : http;
    return new Promise((resolve) => {
      const request = client.request(target, { method: 'POST', headers, agent: target.protocol === 'https:' ? this.agents.https : this.agents.http, timeout: this.idleTimeoutMs });
      const deadline = setTimeout(() => request.destroy(new Error(`did not answer within ${Math.round(this.callTimeoutMs / 1000)} s`)), this.callTimeoutMs);
      request.once('response', (response) => {
        response.once('close', () => clearTimeout(deadline));
        resolve({ response, problem: null });
      });
      request.once('timeout', () => request.destroy(new Error(`sent nothing for ${Math.round(this.idleTimeoutMs / 1000)} s`)));
      request.once('error', (error: NodeJS.ErrnoException) => {
        clearTimeout(deadline);
        if (error.code === 'ENOTFOUND') {
          resolve({ unknownHost: true, problem: `at ${target.hostname} could not be reached: the name does not resolve (ENOTFOUND). Check the network, or point Ward at another endpoint with WARD_MODEL_BASE_URL` });
        } else resolve({ problem: error.code !== undefined ? `could not be reached (${error.code})` : describeError(error) });
      });
      // The client went away: the provider call is abandoned too. The CLI keeps one connection for
      // many calls: each call's listener goes when the call ends (it held the call's body and key).
      const abandon = () => request.destroy();
      req.socket.once('close', abandon);
      request.once('close', () => req.socket.off('close', abandon));
      request.end(body);
    });
  }
}

/** The key the child presents: the CLI sends `x-api-key` in key mode, `Authorization: Bearer` in token mode. */
function presentedKey(req: IncomingMessage): string | undefined {
  const key = req.headers['x-api-key'];
  if (typeof key === 'string') return key;
  const authorization = req.headers.authorization;
  return authorization?.startsWith('Bearer ') ? authorization.slice('Bearer '.length) : undefined;
}
