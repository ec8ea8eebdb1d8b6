import { defineConfig } from 'vite';

// The demo app (demo/) and the test runner share this file.
export default defineConfig({
  root: '.',
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
