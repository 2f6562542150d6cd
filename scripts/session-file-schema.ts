/**
 * Writes docs/session-file.schema.json from the protocol's TypeBox schema of the session file
 * (npm run schema:session-file). With --check it writes nothing and exits 1 when the committed
 * file differs, for CI.
 */
import fs from 'node:fs';
import path from 'node:path';
import { sessionFileJsonSchemaText } from '@svc/protocol';

export const SCHEMA_FILE = path.resolve(import.meta.dirname, '../docs/session-file.schema.json');

const text = sessionFileJsonSchemaText();
if (process.argv.includes('--check')) {
  const current = fs.existsSync(SCHEMA_FILE) ? fs.readFileSync(SCHEMA_FILE, 'utf8') : '';
  if (current !== text) {
    console.error(`${path.relative(process.cwd(), SCHEMA_FILE)} is out of date; run npm run schema:session-file`);
    process.exit(1);
  }
} else {
  fs.writeFileSync(SCHEMA_FILE, text);
  console.log(`wrote ${path.relative(process.cwd(), SCHEMA_FILE)}`);
}
