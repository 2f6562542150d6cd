import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { readKevCatalog } from '../src/vuln-feeds/kev.ts';
import { nvdRecords } from '../src/vuln-feeds/nvd.ts';
import { chunkedStream } from '@svc/test-support/vuln-feeds';

/**
 * The feed readers' size limits as shipped (docs/vuln-feeds.md): 64 MB inflated, 64 MB without a
 * complete record. Slow because each builds and reads its 64 MB; the parsers' other rules are
 * vuln-feeds-parse.test.ts.
 */

describe('limits', () => {
  it('refuses a gzip file that inflates past the feed limit', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 ** 2 + 1, 0x20));
    expect(bomb.length).toBeLessThan(200_000);
    await expect(readKevCatalog(Readable.from([bomb]), 'kev.json.gz')).rejects.toThrow(
      'kev.json.gz: larger than 64 MB once decompressed; this is not a feed file',
    );
  });

  it('refuses a record that never ends', async () => {
    const endless = Buffer.concat([
      Buffer.from('{"vulnerabilities":[{"cve":{"id":"CVE-2024-0001","descriptions":[{"value":"'),
      Buffer.alloc(65 * 1024 ** 2, 0x61),
    ]);
    const read = async () => {
      for await (const _ of nvdRecords(chunkedStream(endless, 1024 ** 2), 'nvd.json'));
    };
    await expect(read()).rejects.toThrow('nvd.json: more than 64 MB without one complete record');
  });
});
