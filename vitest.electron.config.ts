// `npm run test:electron`: the Electron app suite, which needs the Electron binary (not in `npm test`).
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({ ...base, test: { ...base.test, include: ['test/electron/*.electron.ts'] } });
