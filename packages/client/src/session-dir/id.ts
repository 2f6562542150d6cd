/**
 * Session ids: `YYYYMMDD_HHMMSS` in UTC, the second the run started (docs/session-file.md#the-session-id). The pattern is checked before an id becomes a path, so an id can never name
 * anything but one directory directly under the sessions root.
 */

export const SESSION_ID_PATTERN = /^\d{8}_\d{6}$/;

const pad2 = (n: number) => String(n).padStart(2, '0');

export function sessionIdOf(start: Date | number): string {
  const d = new Date(start);
  if (Number.isNaN(d.getTime())) throw new RangeError('a session id needs a valid start time');
  const year = d.getUTCFullYear();
  if (year < 1000 || year > 9999) throw new RangeError(`a session id needs a four-digit year (got ${year})`);
  return `${year}${pad2(d.getUTCMonth() + 1)}${pad2(d.getUTCDate())}_${pad2(d.getUTCHours())}${pad2(d.getUTCMinutes())}${pad2(d.getUTCSeconds())}`;
}

export function isSessionId(value: unknown): value is string {
  return typeof value === 'string' && SESSION_ID_PATTERN.test(value);
}
