/**
 * The last line of defence between `ward` and the terminal (D1): whatever a command writes,
 * escape sequences, other controls (but newline and tab), bidi controls and default-ignorable
 * characters reach the terminal only as visible marks. Every command already escapes what came
 * from outside; this catches the one it forgot. Ward's own output uses no ANSI but one: the
 * status line below, which only this class writes.
 */
import { StringDecoder } from 'node:string_decoder';
import { Writable } from 'node:stream';
import { markInvisible } from '../../common/display.js';

/** A process stream (stdout, stderr) that only ever receives terminal-safe text. */
export class TerminalGuard extends Writable {
  /** Whether the stream behind is a terminal (the prompter asks only on one). */
  readonly isTTY: boolean;
  private readonly decoder = new StringDecoder('utf8');

  constructor(private readonly target: NodeJS.WritableStream & { isTTY?: boolean }) {
    super({ decodeStrings: false });
    this.isTTY = target.isTTY === true;
  }

  /**
   * A status line a terminal redraws in place (a spinner): carriage return, erase the line, the
   * text (guarded like any other, on one line). `null` erases it. Nothing on a non-terminal.
   */
  status(text: string | null): void {
    if (!this.isTTY) return;
    this.target.write(`\r\x1b[2K${text === null ? '' : markInvisible(text.replace(/\n/g, ' '))}`);
  }

  override _write(chunk: string | Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    const text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    // Done once the target has taken the text (a pipe or terminal takes it at once), not when its callback runs on a later
    // tick: a command printing in a loop that never yields (ward review of a bundle) is not held back until it does.
    let called = false;
    const done = (error?: Error | null) => {
      if (!called) callback(error);
      else if (error) this.destroy(error);
      called = true;
    };
    if (this.target.write(markInvisible(text), done)) done();
  }

  override _final(callback: (error?: Error | null) => void): void {
    const rest = this.decoder.end();
    if (rest === '') callback();
    else this.target.write(markInvisible(rest), callback);
  }
}
