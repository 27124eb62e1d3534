import fs from 'node:fs';

/**
 * Whether process `pid` is still running. A zombie (exited, not yet reaped by its parent) counts
 * as gone: signal 0 still reaches it, so on Linux its /proc state is read as well.
 */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return process.platform !== 'linux';
  }
}
