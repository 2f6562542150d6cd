/**
 * pipeline.log of a session: one line per event, each `<ISO time> <kind> <text>`. `start` with
 * the session, target, client version and profile; `stage <name> <n> ms` for every stage in the
 * order it ran; `info <text>` for what the run learnt before its stages (e.g. that the portal
 * holds nothing of the target); `warning <text>` for each warning right after the stage that raised it; `end`
 * with the totals. Text from the scan is folded onto one line, so a line is always one event.
 */

const oneLine = (s: string) => s.replace(/[\p{Cc}\p{Zl}\p{Zp}]+/gu, ' ').trim();
const isoSeconds = (d: Date) => `${d.toISOString().slice(0, 19)}Z`;

export class PipelineLog {
  readonly #lines: string[] = [];

  add(at: Date, kind: 'start' | 'stage' | 'info' | 'warning' | 'end', text: string): void {
    this.#lines.push(`${isoSeconds(at)} ${kind} ${oneLine(text)}`);
  }

  stage(at: Date, name: string, ms: number): void {
    this.add(at, 'stage', `${name} ${Math.max(0, Math.round(ms))} ms`);
  }

  text(): string {
    return this.#lines.map((l) => `${l}\n`).join('');
  }
}

/** Runs `run` and reports its duration in milliseconds by `clock`. */
export function timed<T>(clock: () => number, run: () => T): { value: T; ms: number } {
  const t0 = clock();
  const value = run();
  return { value, ms: clock() - t0 };
}
