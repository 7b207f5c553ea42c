/** Writes protocol/schema.json (run: `npm run schema`). */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildJsonSchema } from './json-schema.js';

export { buildJsonSchema };

/** Path of the committed schema.json, relative to the project root (works from src or dist). */
export function schemaJsonPath(): string {
  // This file is ROOT/protocol/write-schema.ts or ROOT/dist/protocol/write-schema.js.
  const here = new URL('.', import.meta.url);
  const root = new URL(here.pathname.endsWith('/dist/protocol/') ? '../../' : '../', here);
  return fileURLToPath(new URL('protocol/schema.json', root));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(schemaJsonPath(), buildJsonSchema());
  console.log(`wrote ${schemaJsonPath()}`);
}
