import { expect, it } from 'vitest';
import { heavyFirst } from './heavy-first-sequencer.ts';

it('orders network scans, then browser files, then other slow and end-to-end files, then the rest, keeping the given order within each', () => {
  const files = [
    '/r/packages/portal/tests/a.test.ts',
    '/r/packages/portal/tests/b.slow.test.ts',
    '/r/e2e/upload-cli.test.ts',
    '/r/packages/web/tests/sessions.slow.test.ts',
    '/r/e2e/triage-loop-netlab.test.ts',
    '/r/packages/client/tests/c.test.ts',
    '/r/packages/web/tests/fleet-browser.slow.test.ts',
    '/r/packages/client/tests/scan-netlab.slow.test.ts',
  ];
  expect(heavyFirst(files, (f) => f)).toEqual([
    '/r/e2e/triage-loop-netlab.test.ts',
    '/r/packages/client/tests/scan-netlab.slow.test.ts',
    '/r/packages/web/tests/sessions.slow.test.ts',
    '/r/packages/web/tests/fleet-browser.slow.test.ts',
    '/r/packages/portal/tests/b.slow.test.ts',
    '/r/e2e/upload-cli.test.ts',
    '/r/packages/portal/tests/a.test.ts',
    '/r/packages/client/tests/c.test.ts',
  ]);
});
