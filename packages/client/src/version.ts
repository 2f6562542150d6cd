import fs from 'node:fs';
import path from 'node:path';

/**
 * packages/client: this file's parent, from the sources (src/) and from svcd's bundle (dist/)
 * alike, so everything that finds the client's own files starts here.
 */
export const CLIENT_DIR = path.resolve(import.meta.dirname, '..');

/** The client's version, from packages/client/package.json (one source for --version, heartbeats and generated sessions). */
export const CLIENT_VERSION: string = (
  JSON.parse(fs.readFileSync(path.join(CLIENT_DIR, 'package.json'), 'utf8')) as { version: string }
).version;
