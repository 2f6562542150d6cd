/**
 * A background pass over stored sessions that still need something done (records-backfill.ts,
 * due-counts-backfill.ts): `pending(limit)` names up to `limit` of them, `handle` does it and
 * says whether it did. Each session is handled at most once per pass, so one that keeps failing
 * (logged by `handle`) or that `pending` keeps naming cannot hold the pass. Returns how many
 * were done.
 */
export async function eachStoredSession<S extends { client_id: string; session_id: string }>(
  pending: (limit: number) => Promise<S[]>,
  handle: (session: S) => Promise<boolean>,
  stop: () => boolean,
): Promise<number> {
  const BATCH = 50;
  const tried = new Set<string>();
  const keyOf = (s: S) => JSON.stringify([s.client_id, s.session_id]);
  let done = 0;
  for (;;) {
    const batch = (await pending(BATCH + tried.size)).filter((s) => !tried.has(keyOf(s)));
    if (batch.length === 0 || stop()) return done;
    for (const session of batch) {
      if (stop()) return done;
      tried.add(keyOf(session));
      if (await handle(session)) done++;
    }
  }
}
