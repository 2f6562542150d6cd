import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.ts';
import { createLicense } from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import type { TestPortal } from '@svc/test-support/portal';
import { usePortalWithDb } from '@svc/test-support/portal-db';

/**
 * run_scan and update_schedule targets through POST /api/agent-commands:
 * the protocol's target rule with the portal's address budget, SVC_SCAN_MAX_ADDRESSES
 * (131072 here, a /15, so that a /15 passes where the default /16 budget would refuse it).
 */

let portal: TestPortal;
let db: pg.Client;
let admin: string;
let agent: string;
const group = `scan-${randomBytes(3).toString('hex')}`;

usePortalWithDb(
  async (p) => {
    ({ portal, db } = p);
    admin = await portal.adminToken();
    const biz = await createLicense(portal, { tier: 'business' });
    agent = `svcd_scan_${randomBytes(4).toString('hex')}`;
    const hb = await http(portal.url, 'POST', '/api/health', {
      headers: withKey(biz.key),
      json: {
        agent_id: agent,
        version: '4.2.3',
        timestamp: new Date().toISOString(),
        status: 'running',
        uptime_seconds: 1,
      },
    });
    expect(hb.status, hb.text).toBe(200);
    const joined = await http(portal.url, 'POST', '/api/agent-groups', {
      headers: withToken(admin),
      json: { agent_id: agent, group_name: group },
    });
    expect(joined.status, joined.text).toBe(201);
  },
  { env: { SVC_SCAN_MAX_ADDRESSES: '131072' } },
);

const queue = (body: Record<string, unknown>) =>
  http(portal.url, 'POST', '/api/agent-commands', { headers: withToken(admin), json: body });
const stored = async () =>
  (await db.query('SELECT count(*)::int AS n FROM agent_commands WHERE agent_id = $1', [agent])).rows[0].n as number;

const TOO_MANY = Array.from({ length: 257 }, (_, i) => `10.0.${i >> 8}.${i & 255}`).join(',');
const OVER = (n: number) =>
  `targets cover ${n} addresses, more than the 131072 allowed per run (SVC_SCAN_MAX_ADDRESSES)`;

describe('POST /api/agent-commands: scan targets', () => {
  it.each([
    ['0-255.0-255.0-255.0-255', OVER(2 ** 32)],
    ['0.0.0.0/0', OVER(2 ** 32)],
    ['10.0.0.0/8', OVER(2 ** 24)],
    ['10.0.0.0/15,10.2.0.0/24', OVER(131_072 + 256)],
    ['file:///etc/passwd', 'invalid target "file:///etc/passwd": a URL: give the host name or address only'],
    ['10.0.0.256', 'invalid target "10.0.0.256": not an address, CIDR block, IPv4 range or host name'],
    [
      'host.example:22',
      'invalid target "host.example:22": host:port: give the host only (the profile or --ports selects ports)',
    ],
    ['::ffff:10.0.0.1', 'invalid target "::ffff:10.0.0.1": an IPv4-mapped IPv6 address: give the IPv4 address'],
    ['10.0.0.1,fe80::1', 'IPv4 and IPv6 targets cannot be scanned in one run'],
    [TOO_MANY, 'too many targets: 257 entries, at most 256 per run'],
  ])('run_scan %s is a 400 with the rule and nothing is queued', async (targets, message) => {
    const before = await stored();
    for (const body of [
      { agent_id: agent, command_type: 'run_scan', payload: { targets } },
      { group_target: group, command_type: 'run_scan', payload: { targets } },
      { agent_id: agent, command_type: 'update_schedule', payload: { schedule_id: 's1', targets } },
    ]) {
      const res = await queue(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: message });
    }
    expect(await stored()).toBe(before);
  });

  it('a list within the configured budget is queued, normalised', async () => {
    const res = await queue({
      agent_id: agent,
      command_type: 'run_scan',
      payload: { targets: ' 10.0.0.0/16 , 10.1.0.0/17, scanme.example ,', profile: 'quick' },
    });
    expect(res.status, res.text).toBe(201);
    const { rows } = await db.query('SELECT payload FROM agent_commands WHERE id = $1', [res.body.commands[0].id]);
    expect(rows[0].payload).toEqual({ targets: '10.0.0.0/16,10.1.0.0/17,scanme.example', profile: 'quick' });
  });
});

describe('SVC_SCAN_MAX_ADDRESSES', () => {
  it('defaults to one /16 and takes 1 to 16777216', () => {
    expect(loadConfig({}, '/srv').scanMaxAddresses).toBe(65_536);
    expect(loadConfig({ SVC_SCAN_MAX_ADDRESSES: ' 256 ' }, '/srv').scanMaxAddresses).toBe(256);
    expect(loadConfig({ SVC_SCAN_MAX_ADDRESSES: '16777216' }, '/srv').scanMaxAddresses).toBe(16_777_216);
    for (const raw of ['0', '16777217', 'lots'])
      expect(() => loadConfig({ SVC_SCAN_MAX_ADDRESSES: raw }, '/srv')).toThrow(
        /^Invalid configuration: SVC_SCAN_MAX_ADDRESSES must be (a whole number )?between 1 and 16777216/,
      );
  });
});
