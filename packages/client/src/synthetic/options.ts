import { SEVERITIES, type Severity } from '@svc/protocol';
import { MAX_SEED } from './random.ts';

/**
 * Parsing of the `svc synthetic-collection` option values (docs/cli/synthetic_collection.md). Every check throws a SyntheticOptionError with a one-line reason; the command
 * turns it into a usage error (exit 2).
 */
export class SyntheticOptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SyntheticOptionError';
  }
}

export type Mix = Record<Severity, number>;
export const DEFAULT_MIX = 'critical:10,high:20,medium:40,low:20,info:10';
export const TRENDS = ['improving', 'worsening', 'stable'] as const;
export type Trend = (typeof TRENDS)[number];

export const MAX_SESSIONS = 1000;
export const MAX_FINDINGS = 10_000;

/** A whole decimal number within [min, max]: no sign, no fraction, no exponent, no blanks. */
export function parseCount(option: string, value: string, min: number, max: number): number {
  if (!/^\d+$/.test(value))
    throw new SyntheticOptionError(
      `${option} must be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`,
    );
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min || n > max)
    throw new SyntheticOptionError(`${option} must be a whole number from ${min} to ${max}, got ${value}`);
  return n;
}

export function parseSeed(value: string): number {
  return parseCount('--seed', value, 0, MAX_SEED);
}

/**
 * `severity:percent` pairs separated by commas, e.g. `critical:10,high:20,medium:40,low:20,info:10`.
 * Severities are the five of the session file (case-insensitive), each at most once; an omitted
 * severity is 0 %; the percentages are whole numbers and must add up to exactly 100.
 */
export function parseMix(spec: string): Mix {
  const mix: Mix = { critical: 0, high: 0, medium: 0, low: 0, info: 0 };
  const seen = new Set<string>();
  if (spec.trim() === '')
    throw new SyntheticOptionError(`--mix is empty; expected severity:percent pairs such as ${DEFAULT_MIX}`);
  for (const part of spec.split(',')) {
    const m = /^\s*([A-Za-z]+)\s*:\s*(\S*)\s*$/.exec(part);
    if (!m)
      throw new SyntheticOptionError(`--mix entry ${JSON.stringify(part)} is not severity:percent (e.g. high:20)`);
    const severity = m[1]!.toLowerCase();
    const percent = m[2]!;
    if (!(SEVERITIES as readonly string[]).includes(severity))
      throw new SyntheticOptionError(`--mix: unknown severity ${JSON.stringify(m[1])}; use ${SEVERITIES.join(', ')}`);
    if (seen.has(severity)) throw new SyntheticOptionError(`--mix names ${severity} twice`);
    seen.add(severity);
    if (!/^\d+$/.test(percent) || Number(percent) > 100)
      throw new SyntheticOptionError(
        `--mix: the percentage of ${severity} must be a whole number from 0 to 100, got ${JSON.stringify(percent)}`,
      );
    mix[severity as Severity] = Number(percent);
  }
  const sum = SEVERITIES.reduce((a, s) => a + mix[s], 0);
  if (sum !== 100) throw new SyntheticOptionError(`--mix percentages add up to ${sum}, not 100`);
  return mix;
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** A positive whole number and one unit: s, m, h, d or w (e.g. 30m, 12h, 7d, 2w). */
export function parseInterval(value: string): number {
  const m = /^(\d+)([smhdw])$/.exec(value);
  const ms = m ? Number(m[1]) * UNIT_MS[m[2]!]! : NaN;
  if (!m || !Number.isSafeInteger(ms) || ms <= 0) {
    throw new SyntheticOptionError(
      `--interval must be a positive whole number with a unit s, m, h, d or w (e.g. 30m, 12h, 7d, 2w), got ${JSON.stringify(value)}`,
    );
  }
  return ms;
}

export function parseTrend(value: string): Trend {
  if (!(TRENDS as readonly string[]).includes(value))
    throw new SyntheticOptionError(`--trend must be one of ${TRENDS.join(', ')}, got ${JSON.stringify(value)}`);
  return value as Trend;
}

/** Free text that ends up in the session file: non-blank, printable, at most `max` characters. */
export function parseText(option: string, value: string, max: number): string {
  if (value.trim() === '') throw new SyntheticOptionError(`${option} must not be empty`);
  if (/[\u0000-\u001f\u007f]/.test(value) || !value.isWellFormed())
    throw new SyntheticOptionError(`${option} must not contain control characters`);
  if (value.length > max) throw new SyntheticOptionError(`${option} is longer than ${max} characters`);
  return value;
}
