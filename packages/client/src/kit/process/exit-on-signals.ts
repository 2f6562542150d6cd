/** The signals that end a command, with the numbers a shell adds to 128 for its exit status. */
const ENDING_SIGNALS = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } as const;

/**
 * A Ctrl-C, a closed terminal or a `kill` ends the command through `process.exit`, so that its
 * 'exit' listeners run: without this Node dies at once and runs none of them. The programs a
 * command started lead their own process groups (run.ts), which a terminal's Ctrl-C does not
 * reach: their listeners kill those groups, so an nmap does not scan on after the user stopped
 * it. Temp directories are removed by theirs. The status is 128 plus the signal's number, as a
 * shell reports a process the signal ended.
 */
export function exitOnSignals(): void {
  for (const [signal, n] of Object.entries(ENDING_SIGNALS)) process.once(signal, () => process.exit(128 + n));
}

/**
 * Run `fn`, then `remove` (a temp directory, say) however it ends: resolved, thrown, or the
 * process exiting meanwhile (exitOnSignals). `remove` is synchronous: it may run in an 'exit' listener.
 */
export async function removedAfter<T>(remove: () => void, fn: () => Promise<T>): Promise<T> {
  process.once('exit', remove);
  try {
    return await fn();
  } finally {
    process.off('exit', remove);
    remove();
  }
}
