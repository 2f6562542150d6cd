import { type CommandProgress, readProgressLine, type StatusReportBody } from '@svc/protocol';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PROGRESS_REPORT_INTERVAL_MS, progressReporter } from '../src/commands/progress-report.ts';
import { runProcess } from '../src/commands/spawn.ts';

/** svcd's progress reports for a running command: throttled, only on change, never fatal. */

function fakeHost(fail: (n: number) => Error | null = () => null) {
  const sent: StatusReportBody[] = [];
  const warnings: string[] = [];
  const quiet = () => undefined;
  const host = {
    agentId: 'svcd_test0001',
    portal: {
      reportCommandStatus: async (body: StatusReportBody) => {
        sent.push(body);
        const err = fail(sent.length);
        if (err !== null) throw err;
        return { success: true as const, command_id: body.command_id, status: body.status };
      },
    } as never,
    log: { debug: quiet, info: quiet, warning: (m: string) => void warnings.push(m), error: quiet },
  };
  return { host, sent, warnings };
}

const p = (task: string, percent: number): CommandProgress => ({ task, percent });
const report = (progress: CommandProgress) => ({
  command_id: 42,
  agent_id: 'svcd_test0001',
  status: 'acked',
  progress,
});

afterEach(() => {
  vi.useRealTimers();
});

describe('progressReporter', () => {
  it('sends the first progress at once, then at most one per 15 s: the newest, and only when it changed', async () => {
    vi.useFakeTimers();
    const { host, sent } = fakeHost();
    const r = progressReporter(42, host);
    expect(PROGRESS_REPORT_INTERVAL_MS).toBe(15_000);

    r.offer(p('SYN Stealth Scan', 10));
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toEqual([report(p('SYN Stealth Scan', 10))]);

    r.offer(p('SYN Stealth Scan', 20));
    r.offer(p('SYN Stealth Scan', 45.2));
    await vi.advanceTimersByTimeAsync(14_999);
    expect(sent).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent).toEqual([report(p('SYN Stealth Scan', 10)), report(p('SYN Stealth Scan', 45.2))]);

    // The same progress again is no report, however long it stays.
    r.offer(p('SYN Stealth Scan', 45.2));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sent).toHaveLength(2);

    // A change after a quiet spell goes at once.
    r.offer(p('Service scan', 0));
    await vi.advanceTimersByTimeAsync(0);
    expect(sent.at(-1)).toEqual(report(p('Service scan', 0)));
    expect(sent).toHaveLength(3);

    // A change that returns to what was sent last before its turn comes is no report either.
    r.offer(p('Service scan', 50));
    r.offer(p('Service scan', 0));
    await vi.advanceTimersByTimeAsync(15_000);
    expect(sent).toHaveLength(3);
    await r.stop();
  });

  it('a failed report is logged and the next change is still sent', async () => {
    vi.useFakeTimers();
    const { host, sent, warnings } = fakeHost((n) => (n === 1 ? new Error('portal answered 409') : null));
    const r = progressReporter(42, host);
    r.offer(p('Ping Scan', 5));
    await vi.advanceTimersByTimeAsync(0);
    expect(warnings).toEqual(['progress report for command 42 not taken (the command goes on): portal answered 409']);
    r.offer(p('Ping Scan', 100));
    await vi.advanceTimersByTimeAsync(15_000);
    expect(sent).toEqual([report(p('Ping Scan', 5)), report(p('Ping Scan', 100))]);
    expect(warnings).toHaveLength(1);
    await r.stop();
  });

  it('after stop nothing more is sent, and stop waits for the report in flight', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const sent: StatusReportBody[] = [];
    const host = {
      agentId: 'svcd_test0001',
      portal: {
        reportCommandStatus: async (body: StatusReportBody) => {
          sent.push(body);
          await gate;
          return { success: true as const, command_id: body.command_id, status: body.status };
        },
      } as never,
      log: { debug: () => undefined, info: () => undefined, warning: () => undefined, error: () => undefined },
    };
    const r = progressReporter(42, host);
    r.offer(p('NSE', 1));
    r.offer(p('NSE', 2));
    let stopped = false;
    const stopping = r.stop().then(() => (stopped = true));
    r.offer(p('NSE', 3));
    await Promise.resolve();
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(stopped).toBe(true);
    expect(sent).toEqual([report(p('NSE', 1))]);
  });
});

describe('runProcess with onStderrLine', () => {
  it('hands every stderr line over as it comes; the taken ones are left out of stderr, the others kept as they were', async () => {
    const seen: CommandProgress[] = [];
    const script = [
      'echo "Running as root: SYN scan with OS detection" >&2',
      `echo '{"progress":{"task":"SYN Stealth Scan","percent":45.2}}' >&2`,
      'echo "warning: nmap: slow host" >&2',
      `printf '{"progress":{"task":"Service scan","percent":100}}' >&2`,
      'echo done',
    ].join('\n');
    const run = await runProcess(['/bin/bash', '-c', script], {
      env: process.env,
      deadline: Date.now() + 60_000,
      onStderrLine: (line) => {
        const progress = readProgressLine(line);
        if (progress !== null) seen.push(progress);
        return progress !== null;
      },
    });
    expect(run).toEqual({
      exitCode: 0,
      stdout: 'done\n',
      stderr: 'Running as root: SYN scan with OS detection\nwarning: nmap: slow host\n',
      timedOut: false,
    });
    expect(seen).toEqual([p('SYN Stealth Scan', 45.2), p('Service scan', 100)]);
  });
});
