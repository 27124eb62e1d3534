import { spawnSync, spawn } from 'node:child_process';
import fs from 'node:fs'; import os from 'node:os'; import path from 'node:path';
import { startModelProvider } from './test/fixtures/model-provider/provider.js';
const provider = await startModelProvider();
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'prof-'));
const env = { PATH: process.env.PATH!, HOME: scratch, TMPDIR: scratch, WARD_HOME: path.join(scratch, 'w'), WARD_MODEL_BASE_URL: provider.url, ANTHROPIC_API_KEY: 'sk-ant-prof-000000000000', DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS ?? '', WARD_SANDBOX: process.argv[2] ?? 'auto' };
const run = (extra: string[]) => new Promise<void>((resolve) => { provider.push({ blocks: [{ type: 'text', text: 'Hello.' }] }); const c = spawn(process.execPath, [...extra, 'bin/ward.js', 'run', '--new', '--', 'hi'], { env, stdio: 'inherit' }); c.on('close', () => resolve()); });
await run(['--import', '/tmp/count-reg.mjs']);

await provider.close();
