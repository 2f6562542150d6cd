/**
 * Polling on state, for the conditions no event announces. The pause between probes only paces
 * the loop; the deadline bounds it against a hang and is never what the test waits for.
 */

/** Poll `cond` every 20 ms until true; throws after `timeoutMs` (a bound against hangs only). */
export async function until(
  cond: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
  describe: () => string = () => 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${describe()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Polls `probe` every 200 ms until it returns something other than undefined. */
export async function untilValue<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
