/** Writes protocol/schema.json (run: `npm run schema`). */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildJsonSchema } from './json-schema.js';

export { buildJsonSchema };

/** Path of the committed schema.json, relative to the project root (works from src or dist). */
export function schemaJsonPath(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  const root = here.replace(/[\\/]dist[\\/]protocol[\\/]?$/, '/').replace(/[\\/]protocol[\\/]?$/, '/');
  return root + 'protocol/schema.json';
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(schemaJsonPath(), buildJsonSchema());
  console.log(`wrote ${schemaJsonPath()}`);
}
