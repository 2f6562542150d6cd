import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const REPO = path.resolve(import.meta.dirname, '../../..');
const UNIT = path.join(REPO, 'packages/agent/systemd/svcd.service');
const ANALYZE = '/usr/bin/systemd-analyze';
const run = promisify(execFile);

describe('the systemd unit', () => {
  // scripts/setup-system.sh installs systemd, so the suite has systemd-analyze; a host without it skips.
  it.skipIf(!fs.existsSync(ANALYZE))('passes systemd-analyze verify (installed at this checkout)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svcd-unit-'));
    try {
      // The unit names /opt/svc; verify checks that ExecStart exists, so point it at this checkout.
      const unit = path.join(dir, 'svcd.service');
      fs.writeFileSync(unit, fs.readFileSync(UNIT, 'utf8').replaceAll('/opt/svc', REPO));
      const { stdout, stderr } = await run(ANALYZE, ['verify', unit]);
      expect({ stdout, stderr }).toEqual({ stdout: '', stderr: '' });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('does not restart the daemon after exit 3 (configuration) or 4 (unregistered)', () => {
    const text = fs.readFileSync(UNIT, 'utf8');
    expect(text).toMatch(/^RestartPreventExitStatus=3 4$/m);
    expect(text).toMatch(/^ExecStart=\/opt\/svc\/packages\/agent\/bin\/svcd --config-dir \/etc\/svc\/configs$/m);
    expect(text).toMatch(/^ExecReload=\/bin\/kill -HUP \$MAINPID$/m);
  });
});
