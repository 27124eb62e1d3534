// Writes the admin policy templates (JSON Schema, ADMX/ADML, .mobileconfig) and README's key
// table from the one schema, main/policy/schema.ts. Part of `npm run build`; a test checks that
// the checked-in files are current. Run with: node --import tsx scripts/policy-templates.mjs
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { policyTemplates, withKeyTable } from '../main/policy/templates.ts';

const root = path.resolve(import.meta.dirname, '..');
for (const [file, content] of Object.entries(policyTemplates())) {
  mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  writeFileSync(path.join(root, file), content);
}
const readme = path.join(root, 'README.md');
writeFileSync(readme, withKeyTable(readFileSync(readme, 'utf8')));
