import { Kysely, PostgresDialect, type RawBuilder, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '@svc/test-support/portal';
import { pipelined } from '../src/db/bulk.ts';

/**
 * db/bulk.ts `pipelined`: the statements of one transaction, each built while the ones before
 * it are queued or running. They run in the order drawn, never more than two ahead of the one
 * being built, and a failure is reported as the statement's own, whatever was queued after it.
 */

let db: Kysely<unknown>;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);

beforeAll(async () => {
  db = new Kysely({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: await createTestDatabase(), max: 2 }) }),
  });
  await sql`CREATE TABLE steps (n integer NOT NULL, at bigint GENERATED ALWAYS AS IDENTITY)`.execute(db);
  process.on('unhandledRejection', onUnhandled);
});

afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  await db?.destroy();
});

const step = (n: number): RawBuilder<unknown> => sql`INSERT INTO steps (n) VALUES (${n})`;

/** The rows of `steps` in the order they were written. */
async function written(trx: Kysely<unknown>): Promise<number[]> {
  const { rows } = await sql<{ n: number }>`SELECT n FROM steps ORDER BY at`.execute(trx);
  return rows.map((r) => r.n);
}

describe('pipelined', () => {
  it('runs every statement in the order drawn, building each with at most two before it unfinished', async () => {
    await db.transaction().execute(async (trx) => {
      const finished: number[] = [];
      // When statement n is drawn, how many before it had finished.
      const doneWhenDrawn: number[] = [];
      await pipelined(
        trx,
        (function* () {
          for (let n = 1; n <= 9; n++) {
            doneWhenDrawn.push(finished.length);
            const insert = step(n);
            yield {
              execute: (on: Kysely<unknown>) =>
                insert.execute(on).then((r) => {
                  finished.push(n);
                  return r;
                }),
            } as unknown as RawBuilder<unknown>;
          }
        })(),
      );
      expect(await written(trx)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(finished).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
      doneWhenDrawn.forEach((done, i) => {
        expect(done).toBeGreaterThanOrEqual(i - 2);
      });
      await sql`DELETE FROM steps`.execute(trx);
    });
  });

  it("reports a failing statement's own error, not the aborted transaction of those queued after it", async () => {
    const failure = db.transaction().execute(async (trx) => {
      await pipelined(trx, [step(1), sql`SELECT 1 / 0`, step(3), step(4), step(5)]);
    });
    await expect(failure).rejects.toThrow('division by zero');
    expect(await written(db)).toEqual([]);
    expect(unhandled).toEqual([]);
  });

  it('stops at a build that throws, leaving the queued statements to the rolled-back transaction', async () => {
    const failure = db.transaction().execute(async (trx) => {
      await pipelined(
        trx,
        (function* () {
          yield step(1);
          yield step(2);
          throw new Error('3 rows written, 4 expected');
        })(),
      );
    });
    await expect(failure).rejects.toThrow('3 rows written, 4 expected');
    expect(await written(db)).toEqual([]);
    expect(unhandled).toEqual([]);
  });
});
