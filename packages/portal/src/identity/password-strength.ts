import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import * as common from '@zxcvbn-ts/language-common';
import * as en from '@zxcvbn-ts/language-en';

/**
 * zxcvbn's 0..4 scale; 3 is "safely unguessable: moderate protection from offline
 * slow-hash scenario" (about 10^8 guesses or more), which is what an argon2id hash
 * stolen with a backup faces.
 */
export const MIN_PASSWORD_SCORE = 3;

let factory: ZxcvbnFactory | null = null;

function estimator(): ZxcvbnFactory {
  factory ??= new ZxcvbnFactory({
    dictionary: { ...common.dictionary, ...en.dictionary },
    graphs: common.adjacencyGraphs,
    translations: en.translations,
  });
  return factory;
}

/**
 * Why a password is too weak, or null when it is strong enough. `userInputs` (the
 * account's e-mail and its parts) count as dictionary words: a password built from the
 * e-mail is weak. The message never repeats the password.
 */
export function passwordWeakness(password: string, userInputs: string[] = []): string | null {
  const inputs = userInputs.flatMap((s) => [s, ...s.split(/[@.+_-]+/)]).filter((s) => s.length > 0);
  const result = estimator().check(password, inputs);
  if (result.score >= MIN_PASSWORD_SCORE) return null;
  const why = [result.feedback.warning, ...result.feedback.suggestions].filter((s): s is string => !!s);
  return `Password is too weak (strength ${result.score} of 4, at least ${MIN_PASSWORD_SCORE} required)${why.length ? `: ${why.join(' ')}` : ''}`;
}
