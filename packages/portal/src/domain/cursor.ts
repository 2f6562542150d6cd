import { storable } from '@svc/protocol';

/**
 * Keyset cursors, opaque to clients: the base64url of a JSON array holding the last row's
 * position (docs/api.md#cursors). They are not signed: a cursor only positions a page inside
 * what the caller may see anyway, so a made-up one can do no more than skip rows. But every
 * field reaches SQL as a parameter, so a cursor is taken only when it has exactly the form the
 * portal writes and each field the type and range of what it stands for: a NUL, a number past
 * its column's type or a date PostgreSQL reads differently from JavaScript would be a 500.
 */

const BASE64URL = /^[A-Za-z0-9_-]+$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

export const encodeCursor = (fields: readonly unknown[]): string =>
  Buffer.from(JSON.stringify(fields)).toString('base64url');

/**
 * The fields of a cursor as the portal writes them, else null: base64url without padding or
 * anything else (Buffer would skip what it cannot read), canonical (the unused bits of the last
 * character zero), UTF-8, a JSON array.
 */
export function cursorFields(value: string): unknown[] | null {
  if (!BASE64URL.test(value)) return null;
  const bytes = Buffer.from(value, 'base64url');
  if (bytes.toString('base64url') !== value) return null;
  try {
    const parsed: unknown = JSON.parse(utf8.decode(bytes));
    return Array.isArray(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/** A whole number from `min` to `max`. */
export const isIntIn = (v: unknown, min: number, max: number): v is number =>
  Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max;

/** Text PostgreSQL can take (no NUL, no lone surrogate). */
export const isStorableText = (v: unknown): v is string => typeof v === 'string' && storable(v);

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * An instant exactly as Date#toISOString writes it, from year 1 to 9999: JavaScript reads many
 * other forms ("1", an RFC 2822 date, a trailing NUL) that PostgreSQL reads otherwise or refuses.
 */
export const isIsoInstant = (v: unknown): v is string =>
  typeof v === 'string' &&
  ISO_INSTANT.test(v) &&
  !v.startsWith('0000') &&
  !Number.isNaN(Date.parse(v)) &&
  new Date(v).toISOString() === v;

const BIGINT_MAX = 2n ** 63n - 1n;

/** A non-negative PostgreSQL bigint as decimal text (how `pg` hands one over). */
export const isBigintText = (v: unknown): v is string =>
  typeof v === 'string' && /^(0|[1-9]\d{0,18})$/.test(v) && BigInt(v) <= BIGINT_MAX;
