/**
 * Where a turn's time goes (bench/turn.ts): with WARD_TRACE_FILE set, each mark appends
 * `NAME MS` to that file, MS being milliseconds since this process started. Off by default; a
 * mark is then one lookup. Read at each mark, so a bench can trace turns it runs in its own
 * process. Marks name steps, never values (no secret can reach the file).
 */
import fs from 'node:fs';

let fd: number | undefined;
let opened: string | undefined;

export function traceMark(name: string): void {
  const file = process.env.WARD_TRACE_FILE;
  if (file === undefined || file === '') return;
  if (opened !== file) {
    if (fd !== undefined) fs.closeSync(fd);
    fd = fs.openSync(file, 'a', 0o600);
    opened = file;
  }
  fs.writeSync(fd!, `${name} ${performance.now().toFixed(1)}\n`);
}
