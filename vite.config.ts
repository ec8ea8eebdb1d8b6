/// <reference types="vitest/config" />
import { defineConfig } from 'vite';
import { demoConfig, REPO_ROOT } from './demo/config.js';

const HEAVY = ['test/browser/**/*.test.ts', 'test/package/**/*.test.ts', 'test/**/*webgpu*.test.ts', 'test/engine/models/parity.test.ts'];

// The demo app (`npm run demo`, root demo/) and the test runner share this file.
export default defineConfig({
  ...demoConfig(),
  test: {
    root: REPO_ROOT,
    setupFiles: ['test/setup.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two groups, one after the other. Most files run two at a time: much of a file's time is
    // importing and starting servers, which overlaps well. The files that drive Chromium,
    // SwiftShader's WebGPU or packed apps each need the whole machine (2 cores here), so they run
    // alone afterwards.
    projects: [
      { extends: true, test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: HEAVY, maxWorkers: 2, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'alone', include: HEAVY, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
