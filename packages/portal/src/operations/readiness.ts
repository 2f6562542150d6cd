import type pg from 'pg';
import { selectOne } from './queries.ts';

/** A database that takes longer than this for `SELECT 1` is as good as unreachable to a load balancer. */
export const READINESS_TIMEOUT_MS = 2_000;

/** True when one `SELECT 1` through the portal's own pool succeeds within the timeout. */
export async function databaseReady(pool: pg.Pool, timeoutMs = READINESS_TIMEOUT_MS): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
  const query = selectOne(pool).then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([query, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
