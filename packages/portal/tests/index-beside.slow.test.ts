import { NO_CLIENT } from '@svc/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leanSessionDoc, uploadDoc } from '@svc/test-support/large-session';
import { sampleValue, scrape } from '@svc/test-support/metrics-scrape';
import { until } from '@svc/test-support/wait';
import { LEGACY_KEY, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { openDatabase } from '../src/db/pool.ts';
import { indexRowsOf } from '../src/sessions/findings-index.ts';
import { BESIDE_MIN_ROWS, sweepUnpublishedIndexes, writeIndexBeside } from '../src/sessions/index-beside.ts';
import { INDEX_WRITES } from '../src/metrics/registry.ts';

/**
 * The findings index of a large new session, written on a second connection beside its upload's
 * transaction (sessions/index-beside.ts), on a real portal and PostgreSQL: complete and published
 * with the session, never left behind by an upload that fails, swept when its portal stopped
 * between the two commits, replaced by the next upload of the id. Which transaction wrote a row is
 * read from PostgreSQL's own `xmin`.
 */

const METRICS_TOKEN = 'index-beside-metrics-token-0123456789';
let portal: TestPortal;
beforeAll(async () => {
  portal = await startTestPortal({ env: { SVC_METRICS_TOKEN: METRICS_TOKEN } });
});
afterAll(async () => {
  await portal?.close();
});

const N = BESIDE_MIN_ROWS;

async function one<T>(text: string, params: unknown[] = []): Promise<T> {
  const { rows } = await portal.ctx.pool.query(text, params);
  return rows[0] as T;
}

/** What is stored of a session's index, and by which transactions. */
async function stored(sessionId: string) {
  const key = [NO_CLIENT, sessionId];
  const where = 'WHERE client_id = $1 AND session_id = $2';
  return {
    rows: Number((await one<{ n: string }>(`SELECT count(*) AS n FROM session_findings ${where}`, key)).n),
    ordinals: Number(
      (await one<{ n: string }>(`SELECT count(DISTINCT ordinal) AS n FROM session_findings ${where}`, key)).n,
    ),
    pages: Number((await one<{ n: string }>(`SELECT count(*) AS n FROM session_finding_detail_pages ${where}`, key)).n),
    total: (await one<{ total: number } | undefined>(`SELECT total FROM session_findings_state ${where}`, key))?.total,
    pending: Number((await one<{ n: string }>(`SELECT count(*) AS n FROM session_index_pending ${where}`, key)).n),
    session: (await one<{ xmin: string } | undefined>(`SELECT xmin::text FROM sessions ${where}`, key))?.xmin,
    writers: (
      await portal.ctx.pool.query<{ xmin: string }>(
        `SELECT DISTINCT xmin::text FROM session_findings ${where}
         UNION SELECT DISTINCT xmin::text FROM session_finding_detail_pages ${where}`,
        key,
      )
    ).rows.map((r) => r.xmin),
  };
}

/** svc_findings_index_writes_total by outcome, as GET /metrics reports it. */
async function indexWrites(): Promise<Record<string, number>> {
  const s = await scrape(portal.url, METRICS_TOKEN);
  return Object.fromEntries(
    INDEX_WRITES.map((outcome) => [outcome, sampleValue(s, 'svc_findings_index_writes_total', { outcome })]),
  );
}

/** What `act` added to each outcome of svc_findings_index_writes_total. */
async function indexWritesOf(act: () => Promise<unknown>): Promise<Record<string, number>> {
  const before = await indexWrites();
  await act();
  const after = await indexWrites();
  return Object.fromEntries(INDEX_WRITES.map((o) => [o, (after[o] ?? 0) - (before[o] ?? 0)]));
}

/** A session of its own target, so that no other session's findings of record join its index. */
function docOf(sessionId: string, findings: number) {
  const doc = leanSessionDoc(sessionId, NO_CLIENT, findings);
  return { ...doc, metadata: { ...doc.metadata, target: `10.77.0.0/24 ${sessionId}` } };
}

async function upload(sessionId: string, findings: number): Promise<Response> {
  const form = new FormData();
  const doc = docOf(sessionId, findings);
  form.append('session_json', new Blob([JSON.stringify(doc)], { type: 'application/json' }), 'session_results.json');
  return fetch(`${portal.url}/api/upload`, { method: 'POST', headers: { 'x-api-key': LEGACY_KEY }, body: form });
}

describe('the findings index of a large new session, written beside its upload', () => {
  it('is written by a transaction of its own, complete, and published with the session', async () => {
    expect(await indexWritesOf(() => uploadDoc(portal.url, LEGACY_KEY, docOf('beside-new', N)))).toEqual({
      beside: 1,
      busy: 0,
      failed: 0,
    });
    const s = await stored('beside-new');
    expect(s).toMatchObject({ rows: N, ordinals: N, pages: N / 100, total: N, pending: 0 });
    expect(s.writers).toHaveLength(1);
    expect(s.writers[0]).not.toBe(s.session);

    const res = await fetch(`${portal.url}/api/sessions/beside-new/findings?limit=5`, {
      headers: { 'x-api-key': LEGACY_KEY },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { total: number; findings: { index: number; title: string }[] };
    expect(body.total).toBe(N);
    expect(body.findings).toHaveLength(5);
    expect(new Set(body.findings.map((f) => f.index)).size).toBe(5);
  });

  it('a smaller session, and a re-upload of a stored one, are indexed in the upload’s own transaction', async () => {
    expect(await indexWritesOf(() => uploadDoc(portal.url, LEGACY_KEY, docOf('beside-small', N - 1)))).toEqual({
      beside: 0,
      busy: 0,
      failed: 0,
    });
    const small = await stored('beside-small');
    expect(small).toMatchObject({ rows: N - 1, total: N - 1, pending: 0, writers: [small.session] });

    await uploadDoc(portal.url, LEGACY_KEY, docOf('beside-again', N));
    // Not counted: a re-upload replaces its published index in its own transaction.
    expect(await indexWritesOf(() => uploadDoc(portal.url, LEGACY_KEY, docOf('beside-again', N + 7)))).toEqual({
      beside: 0,
      busy: 0,
      failed: 0,
    });
    const again = await stored('beside-again');
    expect(again).toMatchObject({ rows: N + 7, ordinals: N + 7, total: N + 7, pending: 0, writers: [again.session] });
  });

  it('an upload whose transaction fails after the index committed leaves none of it', async () => {
    // A real failure after the merge: PostgreSQL refuses the upload's audit event.
    await portal.ctx.pool.query(`
      CREATE FUNCTION test_refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.session_id = 'beside-fails' THEN RAISE EXCEPTION 'refused by the test'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER test_refuse_audit BEFORE INSERT ON audit_events
        FOR EACH ROW EXECUTE FUNCTION test_refuse_audit();
    `);
    try {
      const res = await upload('beside-fails', N);
      expect(res.status).toBe(500);
      expect(await stored('beside-fails')).toMatchObject({
        rows: 0,
        pages: 0,
        total: undefined,
        pending: 0,
        session: undefined,
      });
    } finally {
      await portal.ctx.pool.query('DROP TRIGGER test_refuse_audit ON audit_events; DROP FUNCTION test_refuse_audit();');
    }
    // The id is free: the next upload of it stores and indexes it.
    expect((await upload('beside-fails', N)).status).toBe(200);
    expect(await stored('beside-fails')).toMatchObject({ rows: N, total: N, pending: 0 });
  });

  it('a session file whose store fails after the index committed: 500, and none of the upload is left', async () => {
    // The file is written while the upload's transaction runs (api/upload/post.ts); this store
    // fails only once the index beside that transaction has committed.
    const blobs = portal.ctx.blobs;
    const realPut = blobs.put.bind(blobs);
    let failedMidway = false;
    blobs.put = async (_prefix, source) => {
      for await (const _ of source as AsyncIterable<Uint8Array>);
      await until(
        async () => (await stored('beside-unstored')).rows === N,
        60_000,
        () => 'the index beside',
      );
      failedMidway = true;
      throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
    };
    let res: Response;
    try {
      res = await upload('beside-unstored', N);
    } finally {
      blobs.put = realPut;
    }
    expect(failedMidway).toBe(true);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: 'Storage failure: the upload was not stored' });
    expect(await stored('beside-unstored')).toMatchObject({
      rows: 0,
      pages: 0,
      total: undefined,
      pending: 0,
      session: undefined,
    });
    const target = docOf('beside-unstored', 1).metadata.target;
    expect(await one(`SELECT count(*)::int AS n FROM finding_records WHERE target = $1`, [target])).toEqual({ n: 0 });
  });

  it('a smaller session whose file cannot be stored: 500, before its transaction or its target’s seeding began', async () => {
    // A smaller session's file is durable before anything of its upload reaches the database
    // (sessions/commit.ts); seeding the target is the first thing that does, and leaves its row.
    const blobs = portal.ctx.blobs;
    const realPut = blobs.put.bind(blobs);
    blobs.put = async (_prefix, source) => {
      for await (const _ of source as AsyncIterable<Uint8Array>);
      throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
    };
    let res: Response;
    try {
      res = await upload('small-unstored', N - 1);
    } finally {
      blobs.put = realPut;
    }
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: 'Storage failure: the upload was not stored' });
    const target = docOf('small-unstored', 1).metadata.target;
    expect(await one(`SELECT count(*)::int AS n FROM finding_targets WHERE target = $1`, [target])).toEqual({ n: 0 });
    expect(await stored('small-unstored')).toMatchObject({ rows: 0, total: undefined, session: undefined });
  });

  it('rows of an upload that stopped between the two commits are swept after the grace period, or replaced by the next upload', async () => {
    const writer = portal.ctx.indexWriter;
    if (writer === null) throw new Error('the portal has no index writer');
    // What a portal that stopped after the index's commit leaves: its rows and their note.
    const orphan = async (sessionId: string) => {
      const rows = indexRowsOf(docOf(sessionId, N));
      await writeIndexBeside(writer.db, { clientId: NO_CLIENT, sessionId }, rows, rows.length);
    };

    await orphan('beside-crashed');
    expect(await stored('beside-crashed')).toMatchObject({ rows: N, pages: N / 100, pending: 1, total: undefined });
    expect(await sweepUnpublishedIndexes(portal.ctx.db)).toBe(0);
    expect(await stored('beside-crashed')).toMatchObject({ rows: N, pending: 1 });
    expect(await sweepUnpublishedIndexes(portal.ctx.db, 0)).toBe(1);
    expect(await stored('beside-crashed')).toMatchObject({ rows: 0, pages: 0, pending: 0 });

    await orphan('beside-retried');
    expect((await upload('beside-retried', N + 3)).status).toBe(200);
    const retried = await stored('beside-retried');
    expect(retried).toMatchObject({ rows: N + 3, ordinals: N + 3, total: N + 3, pending: 0 });
    expect(retried.writers).toHaveLength(1);

    // A note outliving an index that was published since drops nothing of it.
    await portal.ctx.pool.query('INSERT INTO session_index_pending (client_id, session_id) VALUES ($1, $2)', [
      NO_CLIENT,
      'beside-retried',
    ]);
    expect(await sweepUnpublishedIndexes(portal.ctx.db, 0)).toBe(0);
    expect(await stored('beside-retried')).toMatchObject({ rows: N + 3, total: N + 3, pending: 0 });
  });

  it('two first uploads of one large session at once: one creates it, the other replaces it, the index whole', async () => {
    const answers = await Promise.all([upload('beside-race', N), upload('beside-race', N + 1)]);
    expect(answers.map((r) => r.status)).toEqual([200, 200]);
    const race = await stored('beside-race');
    expect([N, N + 1]).toContain(race.total);
    expect(race).toMatchObject({ rows: race.total, ordinals: race.total, pending: 0 });
  });

  it('an upload whose second connection fails writes its index in its own transaction, and stands', async () => {
    const working = portal.ctx.indexWriter;
    // A server that refuses every connection (nothing listens on port 1).
    const refused = openDatabase('postgres://svc@127.0.0.1:1/none', { max: 2, logger: portal.ctx.logger });
    portal.ctx.indexWriter = refused;
    try {
      const writes = await indexWritesOf(async () => expect((await upload('beside-refused', N)).status).toBe(200));
      expect(writes).toEqual({ beside: 0, busy: 0, failed: 1 });
    } finally {
      portal.ctx.indexWriter = working;
      await refused.close();
    }
    const s = await stored('beside-refused');
    expect(s).toMatchObject({ rows: N, ordinals: N, total: N, pending: 0, writers: [s.session] });
  });

  it('an upload that finds every writer connection busy does not wait: it indexes in its own transaction', async () => {
    const writer = portal.ctx.indexWriter;
    if (writer === null) throw new Error('the portal has no index writer');
    const held = [await writer.pool.connect(), await writer.pool.connect()];
    try {
      const writes = await indexWritesOf(() => uploadDoc(portal.url, LEGACY_KEY, docOf('beside-busy', N)));
      expect(writes).toEqual({ beside: 0, busy: 1, failed: 0 });
    } finally {
      for (const c of held) c.release();
    }
    const busy = await stored('beside-busy');
    expect(busy).toMatchObject({ rows: N, total: N, pending: 0, writers: [busy.session] });
  });
});
