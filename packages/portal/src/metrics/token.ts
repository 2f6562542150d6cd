import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * True when `presented` is the metrics token. Both sides are hashed first, so the comparison
 * is constant-time over equal-length digests whatever length was sent.
 */
export function tokenMatcher(expected: string): (presented: string | undefined) => boolean {
  const want = digest(expected);
  return (presented) => presented !== undefined && timingSafeEqual(digest(presented), want);
}
