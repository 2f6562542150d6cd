import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';

/**
 * A fleet that reconnects at once (after a restart, a network cut) opens up to SVC_MAX_CONNECTIONS
 * connections together: the listening socket's accept queue holds that many, not Node's default
 * 511, so none waits for its SYN to be sent again (bench/README.md, "Soak"). `ss` shows a listening
 * socket's backlog as its Send-Q; the kernel caps it at net.core.somaxconn.
 */
const somaxconn = Number(fs.readFileSync('/proc/sys/net/core/somaxconn', 'utf8').trim());

function backlogOf(portal: TestPortal): number {
  const port = new URL(portal.url).port;
  const line = execFileSync('ss', ['-ltnH', `sport = :${port}`], { encoding: 'utf8' }).trim();
  const [, , sendQ] = line.split(/\s+/);
  return Number(sendQ);
}

describe('the listening socket', () => {
  let portal: TestPortal | undefined;
  afterEach(async () => {
    await portal?.close();
    if (portal) fs.rmSync(portal.dataDir, { recursive: true, force: true });
    portal = undefined;
  });

  it('queues SVC_MAX_CONNECTIONS connections by default (1,000)', async () => {
    portal = await startTestPortal();
    expect(backlogOf(portal)).toBe(Math.min(1000, somaxconn));
  });

  it('follows SVC_MAX_CONNECTIONS, and never falls below 511', async () => {
    portal = await startTestPortal({ env: { SVC_MAX_CONNECTIONS: '2000', SVC_MAX_CONNECTIONS_PER_ADDRESS: '20' } });
    expect(backlogOf(portal)).toBe(Math.min(2000, somaxconn));
    await portal.close();
    fs.rmSync(portal.dataDir, { recursive: true, force: true });
    portal = await startTestPortal({ env: { SVC_MAX_CONNECTIONS: '10', SVC_MAX_CONNECTIONS_PER_ADDRESS: '5' } });
    expect(backlogOf(portal)).toBe(Math.min(511, somaxconn));
  });
});
