// A Ward process that starts a stubborn stdio server (it ignores SIGTERM and a closed stdin),
// prints the server's pid, then exits: the server must not outlive it.
import { DataFolder } from '../../main/store/data-folder.js';
import { openConnections } from '../../main/connections/index.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';

const [home, namespace, server] = process.argv.slice(2) as [string, string, string];
const core = new DataFolder(home);
const manager = openConnections(core, parseNamespace(namespace), { store: { kind: 'keychain' } });
await manager.add({ transport: 'stdio', name: 'stubborn', command: process.execPath, args: [server, '--stubborn'] });
const connection = await manager.connection('stubborn');
process.stdout.write(`${connection.pid}\n`);
process.exit(0);
