import compress from '@fastify/compress';
import type { App } from '../context.ts';

/**
 * What the portal compresses: its text answers (JSON of the API and the OpenAPI document,
 * the console's HTML, JS, CSS and SVG, stored session files: JSON, logs and reports). Not
 * PNG, fonts or anything else already compressed (no gain, only CPU), and not
 * `text/event-stream` (nothing may hold back a flush).
 */
const COMPRESSIBLE = /^(?:application\/(?:[\w.+-]+\+)?json|text\/(?:html|css|javascript|plain)|image\/svg\+xml)(?:;|$)/;

/**
 * Brotli or gzip, as the request's Accept-Encoding prefers (brotli on a tie); identity for a
 * client that asks for neither. Answers under 1 KB stay as they are (framing costs more than
 * it saves). Brotli at quality 4 (the plugin's choice): near gzip's speed, smaller output;
 * large stored files are compressed as they stream, never buffered. Request bodies are not
 * decompressed: no client sends them compressed, and a small body that inflates would
 * slip past the byte limits the routes count.
 */
export async function registerCompression(app: App): Promise<void> {
  await app.register(compress, {
    global: true,
    globalDecompression: false,
    encodings: ['br', 'gzip'],
    threshold: 1024,
    customTypes: COMPRESSIBLE,
  });
}
