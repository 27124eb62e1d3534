/**
 * The command line's shape: which command, with which arguments. Kept apart from the commands so
 * the entry can tell a `ward run` before it loads them (the audit sender holds from then on).
 */
/** Flags every command takes, accepted before the command name too (`ward --namespace work run …`). */
const GLOBAL_WITH_VALUE = new Set(['--namespace', '-n']);
const GLOBAL_BARE = new Set(['--json']);

/** The command name and its arguments, with global flags given before the name moved after it. */
export function splitCommandLine(argv: readonly string[]): { name: string | undefined; args: string[] } {
  const leading: string[] = [];
  let index = 0;
  while (index < argv.length) {
    const arg = argv[index]!;
    if (GLOBAL_WITH_VALUE.has(arg) && index + 1 < argv.length) {
      leading.push(arg, argv[index + 1]!);
      index += 2;
    } else if (GLOBAL_BARE.has(arg) || [...GLOBAL_WITH_VALUE].some((flag) => arg.startsWith(`${flag}=`))) {
      leading.push(arg);
      index += 1;
    } else break;
  }
  return { name: argv[index], args: [...leading, ...argv.slice(index + 1)] };
}

/** `--help` counts only among the options: after `--` it is part of the prompt. */
export function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}
