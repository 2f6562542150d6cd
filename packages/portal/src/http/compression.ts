import compress from '@fastify/compress';
import type { App } from '../context.ts';

/**
 * What the portal compresses: its text answers (JSON of the API and the OpenAPI document,
 * the console's HTML, JS, CSS and SVG, stored session files: JSON, logs and reports). Not
 * PNG, fonts or anything else already compressed (no gain, only CPU), and not
 * `text/event-stream` (nothing may hold back a flush).
 */
const COMPRESSIBLE = /^(?:application\/(?:[\w.+-]+\+)?json|text\/(?:html|css|javascript|plain)|image\/svg\+xml)(?:;|$)/;

const THRESHOLD = 1024;

/**
 * Brotli or gzip, as the request's Accept-Encoding prefers (brotli on a tie); identity for a
 * client that asks for neither. Answers under 1 KB stay as they are (framing costs more than
 * it saves). Brotli at quality 4 (the plugin's choice): near gzip's speed, smaller output;
 * large stored files are compressed as they stream, never buffered. Request bodies are not
 * decompressed: no client sends them compressed, and a small body that inflates would
 * slip past the byte limits the routes count.
 */
export async function registerCompression(app: App): Promise<void> {
  // The plugin applies its threshold to buffered answers only; a stored file is a stream,
  // but its length is known: a small one goes as it is too (compressing 30 bytes adds 20).
  // The plugin's documented opt-out is the request's `x-no-compression`; this app-level hook
  // runs before the plugin's route-level one.
  // A callback hook (no promise per answer); only a stream's length is looked at.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (isStream(payload)) {
      const length = Number(reply.getHeader('content-length'));
      if (Number.isInteger(length) && length < THRESHOLD) request.headers['x-no-compression'] = '1';
    }
    done(null, payload);
  });
  await app.register(compress, {
    global: true,
    globalDecompression: false,
    encodings: ['br', 'gzip'],
    threshold: THRESHOLD,
    customTypes: COMPRESSIBLE,
  });
}

const isStream = (payload: unknown): boolean =>
  typeof payload === 'object' && payload !== null && typeof (payload as { pipe?: unknown }).pipe === 'function';
