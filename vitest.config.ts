import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx', 'main/**/*.test.ts', 'renderer/**/*.test.tsx', 'preload/**/*.test.ts', 'common/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real processes (the CLI, MCP servers, browsers) share two cores: keep parallelism modest.
    maxWorkers: 2,
    reporters: ['default', './test/support/summary-reporter.ts'],
    globalSetup: ['test/global-setup.ts'],
  },
});
