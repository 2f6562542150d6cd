import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import * as common from '@zxcvbn-ts/language-common';
import * as en from '@zxcvbn-ts/language-en';

/**
 * zxcvbn's 0..4 scale; 3 is "safely unguessable: moderate protection from offline
 * slow-hash scenario" (about 10^8 guesses or more), which is what an argon2id hash
 * stolen with a backup faces.
 */
export const MIN_PASSWORD_SCORE = 3;

/** Words every guesser tries first against this product's accounts. */
const PRODUCT_WORDS = ['svc', 'svcd', 'portal', 'scan', 'scans', 'scanner', 'console', 'collect', 'report', 'reports'];
const SEASONS = ['spring', 'summer', 'autumn', 'fall', 'winter'];
const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];
const YEAR = /(?:19|20)\d\d/g;
const DATED = new RegExp(`(?:19|20)\\d\\d|${[...SEASONS, ...MONTHS].join('|')}`, 'i');
/** What is left of a dated password once its predictable parts are gone must be this strong on its own (about 10^6 guesses). */
const MIN_REST_SCORE = 2;

/**
 * How the estimator is tuned. The check runs on the event loop: with the library's defaults
 * (100 letter-for-digit swaps tried per word, 256 characters read) a long password held it for
 * seconds and a 24-character one for 200 ms. A few swaps give the same scores to passwords
 * written that way (`p@ssw0rd`), and a password's first 128 characters say whether it is strong
 * (bench/password-check.ts has the times).
 */
export const ESTIMATOR_TUNING = { l33tMaxSubstitutions: 4, maxLength: 128 } as const;

/** An estimator with the dictionaries this check uses; `tuning` {} gives the library's defaults. */
export function newEstimator(
  tuning: { l33tMaxSubstitutions?: number; maxLength?: number } = ESTIMATOR_TUNING,
): ZxcvbnFactory {
  return new ZxcvbnFactory({
    dictionary: { ...common.dictionary, ...en.dictionary },
    graphs: common.adjacencyGraphs,
    translations: en.translations,
    ...tuning,
  });
}

let factory: ZxcvbnFactory | null = null;

function estimator(): ZxcvbnFactory {
  factory ??= newEstimator();
  return factory;
}

/** Who the password is for: the account's e-mail, and the portal's host (from SVC_BASE_URL). */
export interface PasswordContext {
  email?: string | null;
  host?: string | null;
}

/** The e-mail, its local part and domain and their pieces, the host and its labels, the product's words. */
function userInputsOf(context: PasswordContext): string[] {
  const inputs = [...PRODUCT_WORDS];
  for (const s of [context.email, context.host]) {
    if (!s) continue;
    const lower = s.toLowerCase();
    inputs.push(lower, ...lower.split('@'), ...lower.split(/[@.+_-]+/));
  }
  return [...new Set(inputs.filter((s) => s.length >= 2))];
}

/**
 * A season, month or year with the product's name, the e-mail or the host around it
 * (`Winter2026!!!`, `svc-portal-2026`, `jane.doe2026`) is among the first things a guesser
 * tries, yet zxcvbn rates some of them 3 or 4. Such a password must still be strong once the
 * dates, those words and every separator are taken out.
 */
function predictableDated(password: string, words: string[]): boolean {
  if (!DATED.test(password)) return false;
  let rest = password.toLowerCase().replace(YEAR, ' ');
  for (const w of [...words, ...SEASONS, ...MONTHS].sort((a, b) => b.length - a.length)) rest = rest.split(w).join(' ');
  rest = rest.replace(/[^\p{L}\p{N}]+/gu, '');
  return rest.length === 0 || estimator().check(rest, words).score < MIN_REST_SCORE;
}

/**
 * Why a password is too weak, or null when it is strong enough. The account's e-mail and its
 * parts, the portal's host and the product's own words count as dictionary words: a password
 * built from them is weak. The message never repeats the password.
 */
export function passwordWeakness(password: string, context: PasswordContext = {}): string | null {
  const inputs = userInputsOf(context);
  if (predictableDated(password, inputs))
    return 'Password is too weak: a season, month or year with the product name, the e-mail address or the portal host around it is easy to guess.';
  const result = estimator().check(password, inputs);
  if (result.score >= MIN_PASSWORD_SCORE) return null;
  const why = [result.feedback.warning, ...result.feedback.suggestions].filter((s): s is string => !!s);
  return `Password is too weak (strength ${result.score} of 4, at least ${MIN_PASSWORD_SCORE} required)${why.length ? `: ${why.join(' ')}` : ''}`;
}
