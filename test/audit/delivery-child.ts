// The audit delivery loop in a process of its own (for `kill -9` tests): sends the data folder's
// journal to a syslog sink on a loopback port, says "started" and runs until it is killed.
import { WardApp } from '../../main/app/ward-app.js';
import { parsePolicy } from '../../main/policy/policy.js';

const [home, port, caFile, batchSize] = process.argv.slice(2) as [string, string, string, string];
const policy = parsePolicy(JSON.stringify({ auditSink: { syslog: { host: 'localhost', port: Number(port), caFile } } }), 'test policy');
const app = new WardApp({ home, env: {}, policy, audit: { batchSize: Number(batchSize), idleMs: 50, backoffMs: { first: 50, max: 200 } } });
app.startAudit();
process.stdout.write('started\n');
