#!/usr/bin/env node
// The `ward` command. The TypeScript sources are built to dist/ by `npm install` (prepare).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/cli/entry.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('ward: not built yet; run "npm run build" in the Ward folder\n');
  process.exit(1);
}
await import(entry.href);
