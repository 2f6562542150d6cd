import { ConfigError, type Env, read } from './parse.ts';

/** The legacy key's length: refused below the floor, warned about at start below the recommendation. */
export const LEGACY_KEY_FLOOR = 16;
export const LEGACY_KEY_RECOMMENDED = 32;

/**
 * SVC_UPLOAD_API_KEY, the deprecated shared key. Deployments from before the 32-character rule
 * keep starting (server.ts warns); below the floor a key is guessable outright.
 */
export function legacyKeyOf(env: Env): string | null {
  const key = read(env, 'SVC_UPLOAD_API_KEY') ?? null;
  if (key !== null && key.length < LEGACY_KEY_FLOOR)
    throw new ConfigError(
      'SVC_UPLOAD_API_KEY',
      `must be at least ${LEGACY_KEY_FLOOR} characters long (${LEGACY_KEY_RECOMMENDED} or more recommended)`,
    );
  return key;
}
