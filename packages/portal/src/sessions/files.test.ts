import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FsBlobStore } from '../blobs/fs-store.ts';
import { blobPrefix, clientSegment } from './files.ts';

/** docs/api.md#ids-are-per-client: session files are stored per client, and no client id can steer the path. */
describe('blob prefixes per client', () => {
  const day = new Date('2026-01-01T02:00:00Z');
  const hashed = (id: string) => `h-${createHash('sha256').update(id).digest('hex').slice(0, 32)}`;

  it('plain client ids as they are, every other id by its hash, no client and the unknown legacy client apart', () => {
    expect(blobPrefix('acme-01_x', day)).toBe('sessions/c-acme-01_x/2026-01-01');
    for (const id of ['acme.example', 'a:b', 'me@x', '..', '.', '../../etc', 'a/b', 'x'.repeat(65)])
      expect(clientSegment(id)).toBe(hashed(id));
    expect(blobPrefix('', day)).toBe('sessions/none/2026-01-01');
    expect(blobPrefix(null, day)).toBe('sessions/legacy/2026-01-01');
    // The forms cannot collide: `c-`/`h-` prefixes, and `none`/`legacy` have no dash.
    expect(new Set(['none', 'legacy', '', 'c-none'].map((id) => clientSegment(id))).size).toBe(4);
  });

  it('every prefix is a key the blob store accepts, and its objects stay under the root', async () => {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-prefix-'));
    try {
      const store = new FsBlobStore(root);
      await store.init();
      for (const id of ['acme', '../../etc', '..', '', null]) {
        const put = await store.put(blobPrefix(id, day), [Buffer.from('x')]);
        const file = path.resolve(root, 'objects', ...put.key.split('/'));
        expect(file.startsWith(path.join(root, 'objects') + path.sep)).toBe(true);
      }
    } finally {
      await fs.rm(root, { recursive: true, force: true });
    }
  });
});
