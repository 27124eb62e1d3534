// Builds what each target needs: `main` (the ward CLI + Electron main + preload, via esbuild)
// or `all` (also the renderer, via Vite). Bundled ESM keeps `ward` cold start short.
import { build } from 'esbuild';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';

const target = process.argv[2] ?? 'all';
if (!['main', 'all'].includes(target)) {
  console.error(`usage: node scripts/build.mjs main|all (got ${target})`);
  process.exit(2);
}

// Only the hashed chunks go stale; entries are overwritten in place.
await rm('dist/chunks', { recursive: true, force: true });

const nodeEntries = ['main/cli/entry.ts'];
if (existsSync('main/electron/main.ts')) nodeEntries.push('main/electron/main.ts');

await build({
  entryPoints: nodeEntries,
  outdir: 'dist',
  outbase: 'main',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
  chunkNames: 'chunks/[name]-[hash]',
});

// The preload runs in a sandboxed renderer: one CommonJS file, only `electron` external.
if (existsSync('preload/bridge.ts')) {
  await build({
    entryPoints: ['preload/bridge.ts'],
    outfile: 'dist/preload/bridge.cjs',
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'chrome130',
    external: ['electron'],
    logLevel: 'warning',
  });
}

if (target === 'all' && existsSync('renderer/vite.config.ts')) {
  const { build: viteBuild } = await import('vite');
  await viteBuild({ configFile: 'renderer/vite.config.ts', logLevel: 'warn' });
}
