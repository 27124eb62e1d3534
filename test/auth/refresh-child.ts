// A second process for the concurrent-refresh test: it reads the session's tokens, says
// "ready", waits for the go file, refreshes with what it read, and prints a hash of the result
// (never the token itself).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { openSession } from '../../main/auth/session.js';
import { openSecretStore } from '../../main/credentials/open-store.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';

const [home, namespace, goFile] = process.argv.slice(2) as [string, string, string];
const ns = parseNamespace(namespace);
const session = openSession({ home, namespace: ns, store: openSecretStore(home, ns, { kind: 'keychain' }), requestTimeoutMs: 10_000 });
const observed = await session.tokens();
process.stdout.write('ready\n');
const deadline = Date.now() + 20_000;
while (!fs.existsSync(goFile)) {
  if (Date.now() > deadline) throw new Error('no go signal');
  await sleep(5);
}
const renewed = await session.refresh(observed);
process.stdout.write(`${JSON.stringify({ access: createHash('sha256').update(renewed.accessToken).digest('hex') })}\n`);
