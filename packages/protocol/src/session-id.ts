import { Type } from '@sinclair/typebox';

/**
 * Session ids. The scanner names a session `YYYYMMDD_HHMMSS`, the UTC second its run started;
 * servers take any id of letters, digits, `_` and `-` up to 128 characters (older scanners and
 * the smoke test add suffixes). Both rules keep an id a single safe path segment: no `.`,
 * slash, backslash or NUL can pass.
 */

/** Servers validate session ids against this pattern. */
export const SESSION_ID_PATTERN = '^[a-zA-Z0-9_-]+$';
export const MAX_SESSION_ID_LENGTH = 128;
export const SessionId = Type.String({ minLength: 1, maxLength: MAX_SESSION_ID_LENGTH, pattern: SESSION_ID_PATTERN });

const SESSION_ID = new RegExp(SESSION_ID_PATTERN);

/** An id a server accepts: non-empty, at most 128 characters, letters, digits, `_` and `-`. */
export function isValidSessionId(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_SESSION_ID_LENGTH && SESSION_ID.test(value);
}

/** The scanner's own names, `YYYYMMDD_HHMMSS`: what a session directory on a host is called. */
export const SCANNER_SESSION_ID_PATTERN = /^\d{8}_\d{6}$/;

const pad2 = (n: number) => String(n).padStart(2, '0');

/** `YYYYMMDD_HHMMSS` of `start` in UTC. */
export function scannerSessionId(start: Date | number): string {
  const d = new Date(start);
  if (Number.isNaN(d.getTime())) throw new RangeError('a session id needs a valid start time');
  const year = d.getUTCFullYear();
  if (year < 1000 || year > 9999) throw new RangeError(`a session id needs a four-digit year (got ${year})`);
  return `${year}${pad2(d.getUTCMonth() + 1)}${pad2(d.getUTCDate())}_${pad2(d.getUTCHours())}${pad2(d.getUTCMinutes())}${pad2(d.getUTCSeconds())}`;
}

export function isScannerSessionId(value: unknown): value is string {
  return typeof value === 'string' && SCANNER_SESSION_ID_PATTERN.test(value);
}
