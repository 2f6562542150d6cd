import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { DeliveredCommand, StatusReportBody } from '@svc/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { JOURNAL_FILE, Journal, journalFileOf, journalFilesIn } from '../src/journal.ts';
import { deliverOutbox } from '../src/journal-delivery.ts';
import { createPortalClient } from '@svc/client/kit';

const dirs: string[] = [];
const stateDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svcd-journal-'));
  dirs.push(dir);
  return path.join(dir, 'state');
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const cmd = (id: number): DeliveredCommand => ({
  id,
  command_type: 'set_log_level',
  payload: { level: 'debug' },
  priority: 0,
  created_by: 'admin',
  created_at: '2026-11-25T17:00:00.000Z',
});
const ack = (c: DeliveredCommand): StatusReportBody => ({ command_id: c.id, agent_id: 'a1', status: 'acked' });
const noCorruption = (m: string) => {
  throw new Error(m);
};

describe('command journal', () => {
  it('is kept per portal origin and agent id: one state directory holds several, each with its own ids and outbox', () => {
    const dir = stateDir();
    const a = journalFileOf('https://a.example', 'svcd_1');
    const b = journalFileOf('https://b.example', 'svcd_1');
    expect(new Set([a, b, journalFileOf('https://a.example', 'svcd_2')]).size).toBe(3);
    const ja = Journal.open(dir, noCorruption, a);
    ja.enqueue([cmd(1)]);
    ja.begin(ack, new Date());
    const jb = Journal.open(dir, noCorruption, b);
    expect(jb.hasStarted(1)).toBe(false);
    expect(jb.outbox).toEqual([]);
    jb.enqueue([cmd(1)]);
    expect(jb.isQueued(1)).toBe(true);
    // A's unsent ack waits in A's journal for the agent's return there.
    expect(Journal.open(dir, noCorruption, a).outbox).toEqual([ack(cmd(1))]);
    expect(journalFilesIn(dir)).toEqual([a, b].sort());
  });

  it('adopts the single journal of an older agent for the first portal that opens one', () => {
    const dir = stateDir();
    const old = Journal.open(dir, noCorruption);
    old.enqueue([cmd(7)]);
    const name = journalFileOf('https://a.example', 'svcd_1');
    expect(Journal.open(dir, noCorruption, name).isQueued(7)).toBe(true);
    expect(fs.readdirSync(dir)).toEqual([name]);
  });

  it('is one mode-600 file in a mode-700 directory, and survives a reopen', () => {
    const dir = stateDir();
    const j = Journal.open(dir, noCorruption);
    j.enqueue([cmd(1), cmd(2)]);
    const first = j.begin(ack, new Date('2026-11-25T17:01:00Z'));
    expect(first.id).toBe(1);
    j.childStarted({ pid: 4242, startTime: '99' });
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(dir, JOURNAL_FILE)).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(dir)).toEqual([JOURNAL_FILE]);

    const again = Journal.open(dir, noCorruption);
    expect(again.hasStarted(1)).toBe(true);
    expect(again.hasStarted(2)).toBe(false);
    expect(again.isQueued(2)).toBe(true);
    expect(again.current).toEqual({
      command: cmd(1),
      startedAt: '2026-11-25T17:01:00.000Z',
      child: { pid: 4242, startTime: '99' },
    });
    expect(again.outbox).toEqual([ack(cmd(1))]);
  });

  it('finish clears the running command and queues its report after the ack; reports leave oldest first', () => {
    const j = Journal.open(stateDir(), noCorruption);
    j.enqueue([cmd(5)]);
    j.begin(ack, new Date());
    const done: StatusReportBody = { command_id: 5, agent_id: 'a1', status: 'completed', exit_code: 0 };
    j.finish(done);
    expect(j.current).toBeNull();
    expect(j.hasStarted(5)).toBe(true);
    expect(j.outbox.map((r) => r.status)).toEqual(['acked', 'completed']);
    // Only the head can leave.
    j.dropReport(done);
    expect(j.outbox).toHaveLength(2);
    j.dropReport(j.outbox[0] as StatusReportBody);
    expect(j.outbox).toEqual([done]);
  });

  it('an unreadable journal is kept aside and reported; the agent starts empty', () => {
    const dir = stateDir();
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, JOURNAL_FILE), '{"started": [1, 2');
    const said: string[] = [];
    const j = Journal.open(dir, (m) => said.push(m));
    expect(j.outbox).toEqual([]);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/command journal .* is unreadable; kept as .*\.corrupt-\d+/);
    const names = fs.readdirSync(dir);
    expect(names.some((n) => n.startsWith(`${JOURNAL_FILE}.corrupt-`))).toBe(true);
  });

  it('a temporary file left by a crash mid-write does not replace the journal and is removed', () => {
    const dir = stateDir();
    const j = Journal.open(dir, noCorruption);
    j.enqueue([cmd(9)]);
    fs.writeFileSync(path.join(dir, `.${JOURNAL_FILE}.4242-0123456789ab.tmp`), '{"partial');
    expect(Journal.open(dir, noCorruption).isQueued(9)).toBe(true);
    expect(fs.readdirSync(dir)).toEqual([JOURNAL_FILE]);
  });
});

describe('outbox delivery', () => {
  /** A real HTTP server answering each PATCH with the next status of `statuses` (200 with the protocol's answer). */
  async function portalAnswering(statuses: number[]) {
    const seen: number[] = [];
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        const report = JSON.parse(body) as StatusReportBody;
        seen.push(report.command_id);
        const status = statuses.shift() ?? 200;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify(
            status === 200
              ? { success: true, command_id: report.command_id, status: report.status }
              : { error: `refused with ${status}` },
          ),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const portal = createPortalClient({
      target: { uploadUrl: `http://127.0.0.1:${port}/api/upload`, apiKey: 'k', jwt: null, timeoutS: 5 },
    });
    return { portal, seen, close: () => new Promise<void>((r) => server.close(() => r())) };
  }

  const journalWith = (ids: number[]) => {
    const j = Journal.open(stateDir(), noCorruption);
    j.enqueue(ids.map(cmd));
    for (const _ of ids) j.begin(ack, new Date());
    return j;
  };
  const logs: string[] = [];
  const log = {
    debug: () => undefined,
    info: () => undefined,
    warning: (m: string) => logs.push(m),
    error: (m: string) => logs.push(m),
  };

  it.each([503, 500, 429, 408, 403, 401])('HTTP %i keeps the report and stops the round', async (status) => {
    const { portal, seen, close } = await portalAnswering([status]);
    try {
      const j = journalWith([1, 2]);
      expect(await deliverOutbox(j, portal, log)).toBe(false);
      expect(seen).toEqual([1]);
      expect(j.outbox.map((r) => r.command_id)).toEqual([1, 2]);
      expect(await deliverOutbox(j, portal, log)).toBe(true);
      expect(seen).toEqual([1, 1, 2]);
    } finally {
      await close();
    }
  });

  it.each([409, 404, 400])('HTTP %i drops the report with a warning and goes on', async (status) => {
    const { portal, seen, close } = await portalAnswering([status]);
    logs.length = 0;
    try {
      const j = journalWith([1, 2]);
      expect(await deliverOutbox(j, portal, log)).toBe(true);
      expect(seen).toEqual([1, 2]);
      expect(j.outbox).toEqual([]);
      expect(logs).toEqual([
        `status report refused by the portal, dropped: command 1 acked: HTTP ${status} refused with ${status}`,
      ]);
    } finally {
      await close();
    }
  });
});
