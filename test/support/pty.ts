import { spawn } from 'node:child_process';

export interface TerminalSession {
  readonly code: number | null;
  /** Everything the program wrote to the terminal (the pty merges stdout and stderr). */
  readonly screen: string;
}

/**
 * Runs `argv` on a real pseudo-terminal (util-linux `script`), typing `typed` once `when`
 * appears on the screen (each time it appears, up to `times`, default once), as a person at the
 * terminal would. Killed after `timeoutMs`.
 */
export function onTerminal(argv: readonly string[], options: { env: NodeJS.ProcessEnv; cwd: string; when: string; typed: string; timeoutMs: number; times?: number }): Promise<TerminalSession> {
  const command = argv.map((part) => `'${part.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], { env: options.env, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  let screen = '';
  let typed = 0;
  const onOutput = (chunk: Buffer): void => {
    screen += chunk.toString('utf8');
    const shown = Math.min(screen.split(options.when).length - 1, options.times ?? 1);
    for (; typed < shown; typed++) child.stdin.write(options.typed);
  };
  child.stdout.on('data', onOutput);
  child.stderr.on('data', onOutput);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, screen });
    });
  });
}
