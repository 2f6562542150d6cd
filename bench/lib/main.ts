import { cleanupAll, installSignalHandlers, interrupted } from './cleanup.ts';

/**
 * A benchmark's process from its options to its exit code: 2 for bad options (with the usage),
 * 0 when it ran, 130 when interrupted, 1 when it failed; whatever it started is cleaned up
 * (bench/lib/cleanup.ts) in every case.
 */
export async function benchmarkMain<O>(b: {
  parse: () => O | 'help';
  usage: () => string;
  run: (options: O) => Promise<void>;
  log: (message: string) => void;
  /** What the cleanup stops, for its log line. */
  cleans: string;
}): Promise<number> {
  let opts: O | 'help';
  try {
    opts = b.parse();
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    console.error(b.usage());
    return 2;
  }
  if (opts === 'help') {
    console.log(b.usage());
    return 0;
  }
  installSignalHandlers();
  try {
    await b.run(opts);
    return 0;
  } catch (err) {
    if (interrupted.aborted) return 130;
    const cause = err instanceof Error && err.cause !== undefined ? err.cause : '';
    console.error('\nbenchmark failed:', err instanceof Error ? (err.stack ?? err.message) : err, cause);
    return 1;
  } finally {
    b.log(`cleaning up (${b.cleans}) ...`);
    const t = Date.now();
    await cleanupAll();
    b.log(`cleaned up in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  }
}
