// Builds the sandboxed renderer into dist/renderer with relative asset paths, so the same files
// load from the app:// protocol in Electron and from the loopback test harness.
// Paths are relative to the repository root, where scripts/build.mjs runs Vite.
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  root: 'renderer',
  base: './',
  plugins: [react()],
  build: {
    outDir: '../dist/renderer',
    emptyOutDir: true,
    // The CSP allows no inline script; the module preload polyfill would inject one.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
  },
});
