/**
 * A stdio MCP client transport that owns its child fully: argv without a shell, an environment
 * built from an allowlist, its own process group (so helpers it starts die with it), stderr kept
 * in a bounded in-memory log, a SIGKILL to the group when Ward exits, and (Linux) the kernel's
 * parent-death signal when Ward is killed outright.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { ProtocolErrorCode, deserializeMessage, serializeMessage, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/client';
import { diesWithParentPrefix, isExecutable } from '../base/process.js';
import { UpstreamError, refusedAnswer } from './errors.js';
import { JsonRpcLines, type OversizedMessage } from './json-rpc-lines.js';

/** What a stdio server inherits from Ward's environment; everything else must be named. */
export const INHERITED_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'TZ'] as const;

export function stdioEnvironment(explicit: Readonly<Record<string, string>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED_ENV) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...explicit };
}

/** Keeps the last `limit` bytes written to it. */
export class BoundedLog {
  private chunks: Buffer[] = [];
  private size = 0;
  constructor(private readonly limit: number) {}

  append(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > this.limit && this.chunks.length > 0) {
      const excess = this.size - this.limit;
      const head = this.chunks[0]!;
      if (head.length <= excess) {
        this.chunks.shift();
        this.size -= head.length;
      } else {
        this.chunks[0] = head.subarray(excess);
        this.size -= excess;
      }
    }
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is already gone.
  }
}

/** Synchronous on purpose: 'exit' handlers cannot wait. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of live) killGroup(child, 'SIGKILL');
  });
}

export interface StdioTransportOptions {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** One JSON-RPC line above this is discarded as it streams; the request it answers fails as message_too_large. */
  readonly maxMessageBytes: number;
  /** Told once why stdout can no longer be trusted (the transport then stops the server). */
  readonly onFault: (failure: UpstreamError) => void;
  readonly stderr: BoundedLog;
  /** SIGTERM → SIGKILL grace on close. */
  readonly killGraceMs: number;
  /** Told once when the server has exited or never started (a sandboxed server's sandbox is released then). */
  readonly onExit?: () => void;
}

export class GroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private readonly lines: JsonRpcLines;
  private broken = false;
  private exitTold = false;

  constructor(private readonly options: StdioTransportOptions) {
    this.lines = new JsonRpcLines(options.maxMessageBytes);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** With `pid`, what tells the SDK this is a stdio transport (a silent probe means a 2025 server; no Mcp-Param-* headers). */
  get stderr(): BoundedLog {
    return this.options.stderr;
  }

  start(): Promise<void> {
    if (this.child !== undefined) return Promise.reject(new Error('transport already started'));
    installExitHook();
    return new Promise((resolve, reject) => {
      // A SIGKILLed Ward cannot run its exit hook: the server gets the kernel's parent-death signal instead.
      const prefix = diesWithParentPrefix();
      // Through the prefix a missing command would look like a server that exited: say ENOENT, as a plain spawn does.
      if (prefix !== null && !isExecutable(this.options.command, this.options.env.PATH)) {
        this.tellExit();
        reject(Object.assign(new Error(`spawn ${this.options.command} ENOENT`), { code: 'ENOENT', syscall: `spawn ${this.options.command}`, path: this.options.command }));
        return;
      }
      const [file, ...args] = prefix === null ? [this.options.command, ...this.options.args] : [...prefix, this.options.command, ...this.options.args];
      const child = spawn(file!, args, {
        env: this.options.env,
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
        windowsHide: true,
        ...(this.options.cwd === undefined ? {} : { cwd: this.options.cwd }),
      });
      this.child = child;
      this.exited = new Promise((done) => child.once('close', () => done()));
      child.once('error', (error) => {
        live.delete(child);
        this.tellExit();
        reject(error);
        this.onerror?.(error);
      });
      child.once('spawn', () => {
        live.add(child);
        resolve();
      });
      child.once('close', () => {
        live.delete(child);
        this.child = undefined;
        this.tellExit();
        this.onclose?.();
      });
      child.stdout!.on('data', (chunk: Buffer) => this.receive(chunk));
      child.stderr!.on('data', (chunk: Buffer) => this.options.stderr.append(chunk));
      child.stdin!.on('error', (error) => this.onerror?.(error));
    });
  }

  private tellExit(): void {
    if (this.exitTold) return;
    this.exitTold = true;
    this.options.onExit?.();
  }

  /**
   * stdout carries protocol only: a line that is not JSON-RPC means nothing after it can be
   * trusted, so the rest is dropped and the server is stopped. A line too large to keep is only
   * refused: framing is intact after it, so the connection goes on.
   */
  private receive(chunk: Buffer): void {
    if (this.broken) return;
    for (const framed of this.lines.push(chunk)) {
      if (framed.kind === 'oversized') {
        this.refuse(framed.message);
        continue;
      }
      let message: JSONRPCMessage;
      try {
        message = deserializeMessage(framed.text);
      } catch {
        this.fail();
        return;
      }
      this.onmessage?.(message);
      if (this.broken) return;
    }
  }

  /** The oversized message's request fails as message_too_large; a request from the server is answered with an error; a notification is dropped. */
  private refuse(message: OversizedMessage): void {
    if (message.id === undefined) return;
    const limit = `${this.options.maxMessageBytes} bytes`;
    if (message.hasMethod) {
      this.send({ jsonrpc: '2.0', id: message.id, error: { code: ProtocolErrorCode.InvalidRequest, message: `request larger than ${limit}, the most Ward reads as one message` } }).catch(() => undefined);
      return;
    }
    const failure = new UpstreamError('message_too_large', `the server's answer was larger than ${limit}; Ward discarded it without keeping it whole`);
    this.onmessage?.(refusedAnswer(message.id, failure));
  }

  private fail(): void {
    this.broken = true;
    this.lines.clear();
    this.options.onFault(new UpstreamError('protocol_error', 'the server wrote something other than JSON-RPC on stdout'));
    void this.close();
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (stdin === undefined || stdin === null || stdin.destroyed) return Promise.reject(new UpstreamError('closed', 'the server is not running'));
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', () => resolve());
    });
  }

  /** Ends stdin, then SIGTERM and finally SIGKILL to the whole group; resolves when it exited. */
  async close(): Promise<void> {
    const child = this.child;
    if (child === undefined) return;
    child.stdin?.end();
    killGroup(child, 'SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.options.killGraceMs);
    });
    const result = await Promise.race([this.exited.then(() => 'exited' as const), grace]);
    clearTimeout(timer);
    if (result === 'timeout') {
      killGroup(child, 'SIGKILL');
      await this.exited;
    }
    // Helpers left in the group after the leader exited.
    killGroup(child, 'SIGKILL');
  }
}
