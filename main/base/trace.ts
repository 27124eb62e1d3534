/**
 * Where a turn's time goes (bench/turn.ts): with WARD_TRACE_FILE set, each mark appends
 * `NAME MS` to that file, MS being milliseconds since this process started. Off by default; a
 * mark is then one comparison. Marks name steps, never values (no secret can reach the file).
 */
import fs from 'node:fs';

const file = process.env.WARD_TRACE_FILE;
let fd: number | undefined;

export function traceMark(name: string): void {
  if (file === undefined || file === '') return;
  fd ??= fs.openSync(file, 'a', 0o600);
  fs.writeSync(fd, `${name} ${performance.now().toFixed(1)}\n`);
}
