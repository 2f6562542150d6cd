import { describe, expect, it } from 'vitest';
import {
  commandProgressOf,
  MAX_PROGRESS_TASK_LENGTH,
  mayReportProgress,
  progressLine,
  readCommandProgress,
  readProgressLine,
  sameProgress,
  stageProgress,
} from '../src/index.ts';

/** The one definition of a command's progress: svc writes it, svcd reads and sends it, the portal checks it. */

describe('readCommandProgress', () => {
  it('accepts a one-line task of 1 to 64 characters and a percent from 0 to 100', () => {
    expect(MAX_PROGRESS_TASK_LENGTH).toBe(64);
    expect(readCommandProgress({ task: 'SYN Stealth Scan', percent: 45.2 })).toEqual({
      ok: true,
      progress: { task: 'SYN Stealth Scan', percent: 45.2 },
    });
    expect(readCommandProgress({ task: 'x'.repeat(64), percent: 0 })).toEqual({
      ok: true,
      progress: { task: 'x'.repeat(64), percent: 0 },
    });
    expect(readCommandProgress({ task: 'Service scan', percent: 100 })).toEqual({
      ok: true,
      progress: { task: 'Service scan', percent: 100 },
    });
  });

  it.each([
    [null, 'progress must be an object {task, percent}'],
    [[1, 2], 'progress must be an object {task, percent}'],
    ['45%', 'progress must be an object {task, percent}'],
    [{ task: 'SYN', percent: 1, eta: 3 }, 'progress has an unknown field eta'],
    [{ percent: 1 }, 'progress.task must be one line of 1 to 64 characters'],
    [{ task: '', percent: 1 }, 'progress.task must be one line of 1 to 64 characters'],
    [{ task: 'x'.repeat(65), percent: 1 }, 'progress.task must be one line of 1 to 64 characters'],
    [{ task: 'SYN\nStealth', percent: 1 }, 'progress.task must be one line of 1 to 64 characters'],
    [{ task: 'SYN\u0085', percent: 1 }, 'progress.task must be one line of 1 to 64 characters'],
    [{ task: 'SYN' }, 'progress.percent must be a number from 0 to 100'],
    [{ task: 'SYN', percent: '45' }, 'progress.percent must be a number from 0 to 100'],
    [{ task: 'SYN', percent: -0.01 }, 'progress.percent must be a number from 0 to 100'],
    [{ task: 'SYN', percent: 100.01 }, 'progress.percent must be a number from 0 to 100'],
    [{ task: 'SYN', percent: Number.NaN }, 'progress.percent must be a number from 0 to 100'],
  ])('refuses %j naming the field', (value, message) => {
    expect(readCommandProgress(value)).toEqual({ ok: false, message });
  });

  it("keeps the pipeline's stage and refuses one outside the list", () => {
    expect(readCommandProgress({ task: 'Uploading to the portal', percent: 0, stage: 'upload' })).toEqual({
      ok: true,
      progress: { task: 'Uploading to the portal', percent: 0, stage: 'upload' },
    });
    expect(readCommandProgress({ task: 'SYN', percent: 1, stage: 'coffee' })).toEqual({
      ok: false,
      message: 'progress.stage must be one of discovery, nmap, enrichment, session, upload',
    });
    expect(stageProgress('session')).toEqual({
      task: 'Writing the session and its report',
      percent: 0,
      stage: 'session',
    });
    const line = progressLine(stageProgress('nmap'));
    expect(line).toBe('{"progress":{"task":"Starting nmap","percent":0,"stage":"nmap"}}');
    expect(readProgressLine(line)).toEqual({ task: 'Starting nmap', percent: 0, stage: 'nmap' });
    // Another stage is another progress, even at the same task and percent.
    expect(sameProgress({ task: 'a', percent: 0, stage: 'nmap' }, { task: 'a', percent: 0, stage: 'session' })).toBe(
      false,
    );
  });

  it('names the field as the caller calls it', () => {
    expect(readCommandProgress({ task: 'SYN', percent: 200 }, 'line.progress')).toEqual({
      ok: false,
      message: 'line.progress.percent must be a number from 0 to 100',
    });
  });
});

describe('commandProgressOf (what a scanner said, made a valid progress)', () => {
  it('keeps a clean value; rounds the percent to two decimals and keeps it within 0-100', () => {
    expect(commandProgressOf('SYN Stealth Scan', 45.2)).toEqual({ task: 'SYN Stealth Scan', percent: 45.2 });
    expect(commandProgressOf('Service scan', 33.333333)).toEqual({ task: 'Service scan', percent: 33.33 });
    expect(commandProgressOf('Service scan', 100.4)).toEqual({ task: 'Service scan', percent: 100 });
    expect(commandProgressOf('Service scan', -3)).toEqual({ task: 'Service scan', percent: 0 });
  });

  it('puts the task on one line and cuts it to 64 characters', () => {
    expect(commandProgressOf(' NSE\r\n\tscript \u001b[1mscan ', 5)).toEqual({ task: 'NSE script [1mscan', percent: 5 });
    expect(commandProgressOf('y'.repeat(80), 5)).toEqual({ task: 'y'.repeat(64), percent: 5 });
  });

  it('is null when no task is left or the percent is not a number', () => {
    expect(commandProgressOf(' \n ', 5)).toBeNull();
    expect(commandProgressOf('Ping Scan', Number.NaN)).toBeNull();
  });
});

describe('progress lines (svc scan --progress-json on stderr)', () => {
  it('writes one JSON object per line and reads it back', () => {
    const line = progressLine({ task: 'SYN Stealth Scan', percent: 45.2 });
    expect(line).toBe('{"progress":{"task":"SYN Stealth Scan","percent":45.2}}');
    expect(readProgressLine(line)).toEqual({ task: 'SYN Stealth Scan', percent: 45.2 });
    expect(readProgressLine(`${line}\r`)).toEqual({ task: 'SYN Stealth Scan', percent: 45.2 });
  });

  it.each([
    ['warning: nmap: Failed to resolve "nohost"'],
    ['{"progress":{"task":"SYN","percent":101}}'],
    ['{"progress":{"task":"SYN","percent":1},"extra":1}'],
    ['{"progress":{"task":"SYN","percent":1}'],
    ['{"path":"/tmp/x","session_id":"20260101_000000"}'],
    [''],
  ])('any other line (%j) is not progress', (line) => {
    expect(readProgressLine(line)).toBeNull();
  });
});

describe('the progress rules of the status report', () => {
  it('a progress report is taken for an acked command only', () => {
    expect(['pending', 'sent', 'acked', 'completed', 'failed', 'other'].filter(mayReportProgress)).toEqual(['acked']);
  });

  it('sameProgress: the same task and percent', () => {
    expect(sameProgress({ task: 'A', percent: 1 }, { task: 'A', percent: 1 })).toBe(true);
    expect(sameProgress({ task: 'A', percent: 1 }, { task: 'A', percent: 2 })).toBe(false);
    expect(sameProgress({ task: 'A', percent: 1 }, { task: 'B', percent: 1 })).toBe(false);
    expect(sameProgress(null, { task: 'A', percent: 1 })).toBe(false);
  });
});
