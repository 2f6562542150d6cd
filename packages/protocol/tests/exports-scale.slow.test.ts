import { EXPORT_FORMATS } from '@svc/protocol';
import { exportChunks, SARIF_FINGERPRINT_KEY, toSarif } from '@svc/protocol/node';
import { DEFAULT_MIX, parseMix, stagedDocs } from '@svc/client/engine';
import { describe, expect, it } from 'vitest';
import { sarifValidator, smallSession } from './exports-fixture.ts';

/** Exports of generated sessions: realistic findings validate, a large session comes out in small pieces. */
const sessions = (findings: number, count = 2) =>
  [
    ...stagedDocs({
      target: '10.20.0.0/24',
      sessions: count,
      findings,
      mix: parseMix(DEFAULT_MIX),
      intervalMs: 86_400_000,
      trend: 'worsening',
      exceptions: 3,
      seed: 7,
      seeded: true,
      clientId: 'acme',
      now: new Date('2026-03-01T00:00:00Z'),
    }),
  ].map((s) => s.doc);

describe('exports of generated sessions', () => {
  it('SARIF of the generator’s sessions validates, and a finding present in both sessions keeps its fingerprint', () => {
    const valid = sarifValidator();
    const [a, b] = sessions(60);
    type R = {
      ruleId: string;
      partialFingerprints: Record<string, string>;
      properties: { host?: string; port?: number };
    };
    const results = (doc: unknown) => {
      const log = JSON.parse(toSarif(doc)) as { runs: { results: R[] }[] };
      expect(valid(log)).toEqual([]);
      return log.runs[0]!.results;
    };
    const where = (r: R) => JSON.stringify([r.ruleId, r.properties.host, r.properties.port]);
    const first = new Map(results(a).map((r) => [where(r), r.partialFingerprints[SARIF_FINGERPRINT_KEY]]));
    const again = results(b).filter((r) => first.has(where(r)));
    expect(again.length).toBeGreaterThan(10);
    for (const r of again) expect(r.partialFingerprints[SARIF_FINGERPRINT_KEY]).toBe(first.get(where(r)));
  });

  it('streams a session of 20,000 findings in pieces of at most 64 KiB, one piece per finding', () => {
    const base = (smallSession()['findings'] as Record<string, unknown>[])[0]!;
    const doc = {
      metadata: { session_id: '20260301_120000' },
      findings: Array.from({ length: 20_000 }, (_, i) => ({
        ...base,
        fingerprint: undefined,
        host: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
      })),
    };
    for (const format of EXPORT_FORMATS) {
      let pieces = 0;
      let bytes = 0;
      let largest = 0;
      for (const piece of exportChunks(format, doc)) {
        pieces++;
        bytes += Buffer.byteLength(piece);
        largest = Math.max(largest, Buffer.byteLength(piece));
      }
      expect(pieces, format).toBeGreaterThanOrEqual(20_001);
      expect(largest, format).toBeLessThanOrEqual(64 * 1024);
      expect(bytes, format).toBeGreaterThan(20_000 * 100);
    }
  });
});
