/**
 * What a `ward run` and the `ward` service say to each other over the socket: one JSON object per
 * line, each line bounded. Both ends check what they read: the service trusts a client only as
 * far as its token, and the client never runs what the service sends.
 */
import type { Socket } from 'node:net';
import { MAX_PROMPT_CHARS } from '../../../common/limits.js';

/** A line holds at most a prompt's worth of stdin (4 bytes a character) as JSON, or one question. */
const MAX_LINE_BYTES = MAX_PROMPT_CHARS * 4 * 2 + 64 * 1024;

export type ClientMessage =
  | { readonly t: 'hello'; readonly token: string; readonly build: string; readonly env: string }
  | { readonly t: 'run'; readonly args: readonly string[]; readonly cwd: string; readonly tty: { readonly stdin: boolean; readonly stdout: boolean; readonly stderr: boolean } }
  | { readonly t: 'status' }
  | { readonly t: 'stop' }
  | { readonly t: 'stdin'; readonly data: string }
  | { readonly t: 'stdin_end' }
  | { readonly t: 'signal'; readonly name: 'SIGINT' | 'SIGTERM' | 'SIGHUP' }
  | { readonly t: 'answer'; readonly id: number; readonly answer: unknown };

export type ServerMessage =
  | { readonly t: 'welcome' }
  /** The service will not take this client's work: it runs it itself. `why` is for the person. */
  | { readonly t: 'refused'; readonly why: string }
  | { readonly t: 'out'; readonly fd: 1 | 2; readonly data: string }
  | { readonly t: 'read_stdin' }
  | { readonly t: 'ask'; readonly id: number; readonly kind: 'permission' | 'elicitation'; readonly question: unknown }
  | { readonly t: 'cancel'; readonly id: number }
  | { readonly t: 'status'; readonly pid: number; readonly startedAt: number; readonly turns: number; readonly clients: number }
  | { readonly t: 'exit'; readonly code: number };

/** Newline-delimited JSON over a socket; a line over MAX_LINE_BYTES or not JSON ends the connection. */
export class LineChannel<In, Out> {
  private buffered = '';
  private readonly handlers: ((message: In) => void)[] = [];

  constructor(readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.take(chunk));
  }

  onMessage(handler: (message: In) => void): void {
    this.handlers.push(handler);
  }

  send(message: Out): void {
    if (!this.socket.destroyed && this.socket.writable) this.socket.write(`${JSON.stringify(message)}\n`);
  }

  /** Sends the last message and ends the connection once it is written. */
  finish(message: Out): void {
    if (!this.socket.destroyed && this.socket.writable) this.socket.end(`${JSON.stringify(message)}\n`);
  }

  private take(chunk: string): void {
    this.buffered += chunk;
    let newline = this.buffered.indexOf('\n');
    while (newline >= 0) {
      const line = this.buffered.slice(0, newline);
      this.buffered = this.buffered.slice(newline + 1);
      let message: unknown;
      try {
        message = JSON.parse(line);
      } catch {
        this.socket.destroy();
        return;
      }
      if (message === null || typeof message !== 'object' || typeof (message as { t?: unknown }).t !== 'string') {
        this.socket.destroy();
        return;
      }
      for (const handler of this.handlers) handler(message as In);
      newline = this.buffered.indexOf('\n');
    }
    if (this.buffered.length > MAX_LINE_BYTES) this.socket.destroy();
  }
}
