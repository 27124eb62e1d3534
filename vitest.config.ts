import { configDefaults, defineConfig } from 'vitest/config';
import { unitTestFiles } from './test/unit-tests.js';

const allTestFiles = ['test/**/*.test.ts', 'test/**/*.test.tsx', 'main/**/*.test.ts', 'renderer/**/*.test.tsx', 'preload/**/*.test.ts', 'common/**/*.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real processes (the CLI, MCP servers, browsers) share two cores: keep parallelism modest.
    maxWorkers: 2,
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      // The fast loop (`npm run test:unit`): no build, no test services, no child processes.
      {
        extends: true,
        test: { name: 'unit', include: [...unitTestFiles], setupFiles: ['test/support/no-child-processes.ts'] },
      },
      // Everything else runs the built `ward`, servers, the keychain or a browser.
      {
        extends: true,
        test: {
          name: 'integration',
          include: allTestFiles,
          exclude: [...configDefaults.exclude, ...unitTestFiles],
          globalSetup: ['test/global-setup.ts'],
        },
      },
    ],
  },
});
