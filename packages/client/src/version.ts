import fs from 'node:fs';
import path from 'node:path';

/** The client's version, from packages/client/package.json (one source for --version, heartbeats and generated sessions). */
export const CLIENT_VERSION: string = (
  JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '../package.json'), 'utf8')) as { version: string }
).version;
