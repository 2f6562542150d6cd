import { hash, verify, type Algorithm } from '@node-rs/argon2';

// OWASP's argon2id recommendation (19 MiB, 2 iterations, 1 lane). `Algorithm` is a const
// enum, which erasable-syntax TypeScript cannot import as a value: 2 is Algorithm.Argon2id.
const OPTIONS = { algorithm: 2 as Algorithm, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

let dummy: Promise<string> | null = null;

/**
 * Verify a password. For an unknown user we still verify against a dummy hash so the
 * response time does not reveal which e-mail addresses have accounts.
 */
export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  if (stored === null) {
    dummy ??= hashPassword('dummy-password-for-timing');
    await verify(await dummy, password).catch(() => false);
    return false;
  }
  return verify(stored, password).catch(() => false);
}
