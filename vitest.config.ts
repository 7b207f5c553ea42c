import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Compiles the project once (tsc) so tests can spawn the real daemon (bin/agentd.js → dist/).
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // The machine has 2 cores, shared; daemon tests spawn their own processes.
    maxWorkers: 2,
  },
});
