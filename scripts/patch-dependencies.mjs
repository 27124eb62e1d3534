// Applied after every install (package.json "postinstall"): exact, version-checked edits to a
// pinned dependency, each with the reason it exists. Each belongs upstream; drop an edit when the
// pinned version carries the fix. The version is pinned exactly in package.json; a version other
// than the one an edit was written for is left as installed with a warning, and text that no
// longer matches fails the install.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** node-forge's import, replaced by `forgePart(...path)`: an object whose properties are read from node-forge, required on the first read. */
const FORGE_ON_FIRST_USE = [
  "import forge from 'node-forge';\n",
  "import { createRequire } from 'node:module'; // Ward: node-forge loaded on first use (scripts/patch-dependencies.mjs)\nlet forgeLoaded;\nconst forgePart = (...names) => new Proxy({}, { get: (_, key) => names.reduce((part, name) => part[name], (forgeLoaded ??= createRequire(import.meta.url)('node-forge')))[key] });\n",
];

export const PATCHES = [
  {
    // Speed: the sandbox runtime (Linux) starts its two socat bridges, looks for their sockets at once,
    // then after 0, 100, 200 and 300 ms. socat needs a few ms, so the look after 0 ms almost
    // always misses and every sandboxed `ward run` waited 100 ms for its proxies (issue 19).
    // Looking every 5 ms for the same 600 ms bound finds them as they appear.
    pkg: '@anthropic-ai/sandbox-runtime',
    version: '0.0.83',
    file: 'dist/sandbox/linux-sandbox-utils.js',
    edits: [
      ['    const maxAttempts = 5;\n', '    const maxAttempts = 121; // Ward: look every 5 ms, 600 ms in all (scripts/patch-dependencies.mjs)\n'],
      ['        await new Promise(resolve => setTimeout(resolve, i * 100));\n', '        await new Promise(resolve => setTimeout(resolve, 5));\n'],
      // The script in the sandbox ends its two bridges on exit with `kill %1 %2`, which dash (the
      // `/bin/sh` Ward runs it with, so no start-up file is read) does not resolve outside an
      // interactive shell: the bridges outlived the command, and bubblewrap's init, which waits
      // for every process in the sandbox, kept the sandbox alive after a SIGKILLed Ward. The
      // bridges are ended by the process ids the script already keeps.
      [`        "trap 'rc=$?; kill %1 %2 2>/dev/null; exit $rc' EXIT",\n`, `        "trap 'rc=$?; kill $_srt_http $_srt_socks 2>/dev/null; exit $rc' EXIT", // Ward: by pid, not %1 %2 (scripts/patch-dependencies.mjs)\n`],
      ["    'unset _srt_since _srt_now _srt_up _srt_counts _srt_kind _srt_skip _srt_inuse _srt_http _srt_socks',\n", "    'unset _srt_since _srt_now _srt_up _srt_counts _srt_kind _srt_skip _srt_inuse', // Ward: the exit trap still needs the two pids\n"],
      // Security: the built-in write denies (shell, git and editor start-up files, agent settings,
      // each repository's hooks and config, found by a ripgrep scan) are computed from
      // process.cwd(), which is Ward's folder, not the run's: a run could create a workspace's
      // .bashrc or .mcp.json, or a nested repository's hook. The two functions take the folder as an
      // argument (default: the cwd, as before), and the scan is exported, so Ward applies the same
      // set to every folder a run may write without process.chdir, which several runs at once would race.
      ['export function linuxGetCwdMandatoryDenyPaths(allowGitConfig = false) {\n    const cwd = process.cwd();\n', 'export function linuxGetCwdMandatoryDenyPaths(allowGitConfig = false, cwd = process.cwd()) { // Ward: the folder as an argument (scripts/patch-dependencies.mjs)\n'],
      ["async function linuxGetMandatoryDenyPaths(ripgrepConfig = { command: 'rg' }, maxDepth = DEFAULT_MANDATORY_DENY_SEARCH_DEPTH, allowGitConfig = false, abortSignal) {\n    const cwd = process.cwd();\n", "export async function linuxGetMandatoryDenyPaths(ripgrepConfig = { command: 'rg' }, maxDepth = DEFAULT_MANDATORY_DENY_SEARCH_DEPTH, allowGitConfig = false, abortSignal, cwd = process.cwd()) { // Ward: exported, the folder as an argument\n"],
      ['    const denyPaths = linuxGetCwdMandatoryDenyPaths(allowGitConfig);\n', '    const denyPaths = linuxGetCwdMandatoryDenyPaths(allowGitConfig, cwd); // Ward: the scanned folder\n'],
      // Speed (issue 29): the scan of the runtime's own working directory ran ripgrep on every
      // launch. A caller may now hand in the scan to use instead (Ward's, cached per folder until
      // the folder's tree changes: main/sandbox/deny-scan-cache.ts); without one, nothing changes.
      ['const DEFAULT_MANDATORY_DENY_SEARCH_DEPTH = 3;\n', 'const DEFAULT_MANDATORY_DENY_SEARCH_DEPTH = 3; // Ward: a scan handed in by the caller (scripts/patch-dependencies.mjs)\nlet mandatoryDenyScan;\nexport function setMandatoryDenyScan(scan) { mandatoryDenyScan = scan; }\n'],
      ['            ...(await linuxGetMandatoryDenyPaths(ripgrepConfig, mandatoryDenySearchDepth, allowGitConfig, abortSignal)),\n', '            ...(await (mandatoryDenyScan ?? linuxGetMandatoryDenyPaths)(ripgrepConfig, mandatoryDenySearchDepth, allowGitConfig, abortSignal)), // Ward: the scan handed in, if any\n'],
      // A read grant bound back over a read-denied region after the write paths inside it (a workspace
      // under a folder granted for reading) made those write paths read-only: the run could not
      // write its own workspace, and bubblewrap could not make the mount points of the built-in
      // denies there ("Can't create file … Read-only file system"). Write paths a read path covers
      // are bound again, on top.
      [
        '        logForDebugging(`[Sandbox Linux] Re-allowed read access within denied region: ${allowPath}`);\n    }\n    return { restoredWrites, restoredReads };\n',
        '        logForDebugging(`[Sandbox Linux] Re-allowed read access within denied region: ${allowPath}`);\n    }\n    for (const w of restoredWrites) if (restoredReads.some(r => r.dest !== w.dest && isAtOrUnder(w.dest, r.dest))) args.push(\'--bind\', w.source, w.dest); // Ward: write paths a read path covers stay writable (scripts/patch-dependencies.mjs)\n    return { restoredWrites, restoredReads };\n',
      ],
    ],
  },
  {
    // Speed (issue 29): the runtime finds bwrap, socat, ripgrep and the shell by spawning `which`
    // once per name, 5–9 ms each: ~55 ms of its availability check and ~19 ms of every launch it
    // wraps, on the way to the CLI's spawn. PATH is searched here the way `which` searches it (each
    // entry in order, an empty one meaning the working directory; the first regular file this
    // process may execute), with no process started.
    pkg: '@anthropic-ai/sandbox-runtime',
    version: '0.0.83',
    file: 'dist/utils/which.js',
    edits: [
      ["import { spawnSync } from 'node:child_process';\n", "import { accessSync, constants, statSync } from 'node:fs'; // Ward: PATH searched in process (scripts/patch-dependencies.mjs)\n"],
      [
        "    // Fallback to Node.js implementation\n    const result = spawnSync('which', [bin], {\n        encoding: 'utf8',\n        stdio: ['ignore', 'pipe', 'ignore'],\n        timeout: 1000,\n    });\n    if (result.status === 0 && result.stdout) {\n        return result.stdout.trim();\n    }\n    return null;\n",
        "    // Ward: PATH searched as `which` does, without spawning it (scripts/patch-dependencies.mjs)\n    const candidates = bin.includes('/') ? [bin] : (process.env.PATH ?? '').split(':').map((dir) => `${dir === '' ? '.' : dir}/${bin}`);\n    for (const candidate of candidates) {\n        try {\n            if (!statSync(candidate).isFile()) continue;\n            accessSync(candidate, constants.X_OK);\n            return candidate;\n        }\n        catch {\n            // Not there, or not executable by this process.\n        }\n    }\n    return null;\n",
      ],
    ],
  },
  // Speed (issue 29): the runtime's TLS-terminating proxy (which Ward does not turn on) signs with
  // node-forge, imported at the top of two modules the runtime always loads: 42 CommonJS files,
  // 45–58 ms of every sandboxed `ward run`'s sandbox probe, on the way to the CLI's spawn. It is
  // loaded on first use instead: each namespace the modules take from it reads through to the
  // library, required then, and nothing reads from it while the modules load.
  {
    pkg: '@anthropic-ai/sandbox-runtime',
    version: '0.0.83',
    file: 'dist/sandbox/mitm-ca.js',
    edits: [
      FORGE_ON_FIRST_USE,
      ['const { asn1, pki, md, random, util } = forge;\n', "const [asn1, pki, md, random, util] = ['asn1', 'pki', 'md', 'random', 'util'].map((name) => forgePart(name)); // Ward: read when used\n"],
      ['const getTBSCertificate = pki.getTBSCertificate;\n', 'const getTBSCertificate = (...args) => pki.getTBSCertificate(...args); // Ward: read when called\n'],
      ['const C = asn1.Class;\nconst T = asn1.Type;\n', "const [C, T] = [forgePart('asn1', 'Class'), forgePart('asn1', 'Type')]; // Ward: read when used\n"],
    ],
  },
  {
    pkg: '@anthropic-ai/sandbox-runtime',
    version: '0.0.83',
    file: 'dist/sandbox/mitm-leaf.js',
    edits: [FORGE_ON_FIRST_USE, ['const { pki } = forge;\n', "const pki = forgePart('pki'); // Ward: read when used\n"]],
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
