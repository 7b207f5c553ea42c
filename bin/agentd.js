#!/usr/bin/env node
import { main } from '../dist/src/cli/main.js';

main().catch((err) => {
  process.stderr.write(`agentd: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
