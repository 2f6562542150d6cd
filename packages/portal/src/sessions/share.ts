import { randomBytes } from 'node:crypto';

/** SPEC: 32 random bytes rendered as 64 hex characters. */
export function newShareToken(): string {
  return randomBytes(32).toString('hex');
}

export function shareUrl(baseUrl: string, token: string): string {
  return `${baseUrl}/share/?token=${token}`;
}
