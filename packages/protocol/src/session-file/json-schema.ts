import { SessionFile } from './schema.ts';

/**
 * The session file's JSON Schema as published in docs/session-file.schema.json, for scanner
 * authors and validators outside TypeScript. TypeBox schemas are JSON Schema already; only
 * its symbol-keyed bookkeeping is dropped by JSON.stringify. A test compares the committed
 * file with this text so it never drifts.
 */
export const JSON_SCHEMA_DIALECT = 'http://json-schema.org/draft-07/schema#';

export function sessionFileJsonSchemaText(): string {
  return `${JSON.stringify({ $schema: JSON_SCHEMA_DIALECT, ...SessionFile }, null, 2)}\n`;
}
