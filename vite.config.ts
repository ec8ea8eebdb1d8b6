/// <reference types="vitest/config" />
import { defineConfig } from 'vite';
import { demoConfig, REPO_ROOT } from './demo/config.js';

// The demo app (`npm run demo`, root demo/) and the test runner share this file.
export default defineConfig({
  ...demoConfig(),
  test: {
    root: REPO_ROOT,
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
