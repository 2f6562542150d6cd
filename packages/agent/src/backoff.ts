/**
 * Wait after the n-th consecutive failed heartbeat (n >= 1): doubling from `baseMs`, capped at
 * the heartbeat interval, then "equal jitter" (between half and all of it) so a fleet that lost
 * its portal together does not come back in one burst.
 */
export function backoffMs(failures: number, baseMs: number, capMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(failures - 1, 20));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
