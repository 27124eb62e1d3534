// Takes a Ward lock in a separate process, says "held" and keeps it until its stdin closes (or it
// is killed); says "failed <code>" when it cannot take it within the optional timeout (ms).
import { withLock } from '../../main/credentials/lock.js';
import { WardError } from '../../main/base/errors.js';

const [file, timeout] = process.argv.slice(2) as [string, string | undefined];
try {
  await withLock(
    file,
    async () => {
      process.stdout.write('held\n');
      await new Promise<void>((resolve) => process.stdin.on('end', resolve).resume());
    },
    timeout === undefined ? {} : { timeoutMs: Number(timeout) },
  );
} catch (error) {
  if (!(error instanceof WardError)) throw error;
  process.stdout.write(`failed ${error.code}\n`);
}
