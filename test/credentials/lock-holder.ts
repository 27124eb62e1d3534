// Holds a Ward lock in a separate process until its stdin closes (or it is killed).
import { withLock } from '../../main/credentials/lock.js';

const [file] = process.argv.slice(2) as [string];
await withLock(file, async () => {
  process.stdout.write('held\n');
  await new Promise<void>((resolve) => process.stdin.on('end', resolve).resume());
});
