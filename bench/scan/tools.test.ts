import { describe, expect, it } from 'vitest';
import { type SvcRun, summariseTools, toolTimesOf } from './tools.ts';

const LOG = [
  '2026-11-27T06:40:00Z start session s, target t',
  '2026-11-27T06:40:00Z stage nmap 54341 ms (a to b, exit 0, syn scan)',
  '2026-11-27T06:40:00Z stage tool masscan not installed: skipped (fast port discovery)',
  '2026-11-27T06:40:00Z stage tool testssl.sh command ip netns exec ns /usr/bin/testssl 10.231.0.12:443',
  '2026-11-27T06:40:00Z stage tool testssl.sh 10.231.0.12:443 110000 ms, exit 0',
  '2026-11-27T06:40:00Z stage tool testssl.sh 10.231.0.10:993 109240 ms, exit none, timed out',
  '2026-11-27T06:40:00Z stage tool whatweb http://10.231.0.12:80/ 3000 ms, exit 1',
  '2026-11-27T06:40:00Z stage report 48 ms',
  '',
].join('\n');

const run = (ms: number, tools: SvcRun['tools']): SvcRun => ({
  ms,
  cpuMs: 0,
  nmapMs: 0,
  stages: {},
  tools,
  findings: 1,
});

describe('bench:scan tool times', () => {
  it('sums each tool’s timed processes from pipeline.log, ignoring commands and skips', () => {
    expect(toolTimesOf(LOG)).toEqual({
      'testssl.sh': { ms: 219_240, runs: 2 },
      whatweb: { ms: 3000, runs: 1 },
    });
    expect(toolTimesOf('2026-11-27T06:40:00Z stage nmap 100 ms\n')).toEqual({});
  });

  it('splits the time the tools added between them by their seconds', () => {
    const s = summariseTools([run(200_000, { a: { ms: 300_000, runs: 2 }, b: { ms: 100_000, runs: 1 } })], 50_000);
    expect(s).toEqual({
      runs: 1,
      wallMs: 200_000,
      addedMs: 150_000,
      findings: 1,
      perTool: [
        { name: 'a', processes: 2, seconds: 300, share: 0.5625 },
        { name: 'b', processes: 1, seconds: 100, share: 0.1875 },
      ],
    });
    expect(summariseTools([], 50_000)).toBeNull();
  });
});
