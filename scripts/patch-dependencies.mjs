// Applied after every install (package.json "postinstall"): exact, version-checked edits to a
// pinned dependency, each with the reason it exists. Each belongs upstream; drop an edit when the
// pinned version carries the fix. A version other than the one an edit was written for is left
// as installed (the edit is about speed, not safety); text that no longer matches fails the install.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const PATCHES = [
  {
    // The sandbox runtime (Linux) starts its two socat bridges, looks for their sockets at once,
    // then after 0, 100, 200 and 300 ms. socat needs a few ms, so the look after 0 ms almost
    // always misses and every sandboxed `ward run` waited 100 ms for its proxies (issue 19).
    // Looking every 5 ms for the same 600 ms bound finds them as they appear.
    pkg: '@anthropic-ai/sandbox-runtime',
    version: '0.0.83',
    file: 'dist/sandbox/linux-sandbox-utils.js',
    edits: [
      ['    const maxAttempts = 5;\n', '    const maxAttempts = 121; // Ward: look every 5 ms, 600 ms in all (scripts/patch-dependencies.mjs)\n'],
      ['        await new Promise(resolve => setTimeout(resolve, i * 100));\n', '        await new Promise(resolve => setTimeout(resolve, 5));\n'],
    ],
  },
];

/**
 * Applies one package's edits in the package folder `root`. Returns what it did: 'edited',
 * 'applied' (by an earlier install) or 'other-version'; throws when the text no longer matches.
 */
export function applyPatch(root, patch) {
  const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  if (version !== patch.version) return 'other-version';
  const file = path.join(root, patch.file);
  let text = fs.readFileSync(file, 'utf8');
  let changed = false;
  for (const [before, after] of patch.edits) {
    if (text.includes(after)) continue;
    if (!text.includes(before)) throw new Error(`patch-dependencies: ${patch.pkg}@${version} ${patch.file} no longer holds the text the edit expects: ${JSON.stringify(before)}`);
    text = text.replace(before, after);
    changed = true;
  }
  if (!changed) return 'applied';
  // A new file in place of the old (hard-linked copies of node_modules keep their own).
  const temporary = `${file}.ward-patch`;
  fs.writeFileSync(temporary, text);
  fs.renameSync(temporary, file);
  return 'edited';
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const require = createRequire(import.meta.url);
  for (const patch of PATCHES) {
    let root;
    try {
      root = path.dirname(require.resolve(`${patch.pkg}/package.json`));
    } catch {
      continue; // not installed: nothing to edit
    }
    const done = applyPatch(root, patch);
    if (done === 'edited') console.log(`patch-dependencies: ${patch.pkg}@${patch.version}: ${patch.file} edited`);
    if (done === 'other-version') console.warn(`patch-dependencies: ${patch.pkg} is not ${patch.version}, which the edit was written for; left as installed (see scripts/patch-dependencies.mjs)`);
  }
}
