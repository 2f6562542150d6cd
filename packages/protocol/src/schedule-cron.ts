import { Cron } from 'croner';

/**
 * The one cron rule of every scan schedule (config files, update_schedule, the portal's
 * schedules): 5 fields, or 6 with seconds first, read by croner; the text is kept with its
 * fields single-spaced, so `0 2 * * 1` and `0  2 * * 1` are one schedule.
 */
export const normalizeCron = (cron: string): string => cron.trim().split(/\s+/).join(' ');

/** croner's options for a schedule's job: the same on the portal (checks) and svcd (runs). */
export const cronOptions = (timezone: string | undefined) =>
  ({ mode: '5-or-6-parts', ...(timezone === undefined ? {} : { timezone }) }) as const;

/** Why a cron pattern cannot be used (croner's reason, or one that never comes round), or null. */
export function cronProblem(pattern: string, timezone?: string): string | null {
  let job: Cron;
  try {
    job = new Cron(normalizeCron(pattern), { ...cronOptions(timezone), paused: true });
  } catch (err) {
    return `is not a valid cron pattern: ${(err as Error).message}`;
  }
  const next = job.nextRun();
  job.stop();
  return next === null ? 'never runs' : null;
}

const TIME_ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+/-]{0,63}$/;

/** An IANA time zone name this runtime knows (`UTC`, `Europe/Berlin`); offsets and abbreviations are not names. */
export function isTimeZone(tz: string): boolean {
  if (!TIME_ZONE_NAME.test(tz)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
