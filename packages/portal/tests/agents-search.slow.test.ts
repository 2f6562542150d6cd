import { beforeAll, describe, expect, it } from 'vitest';
import { AGENT_SEARCH_MAX_LENGTH, AGENT_SEARCH_PATTERN } from '@svc/protocol';
import { createLicense, createScopedUser, type ScopedUser, uniqueClientId } from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import type { TestPortal } from '@svc/test-support/portal';
import { useFleetPortal } from '@svc/test-support/fleet-portal';

/**
 * The fleet search: `q` on GET /api/health?agents=true (protocol AgentsQuery.q). A host name
 * contains the term (any case), an address equals a whole address or starts with a partial one,
 * an agent id starts with the term (any case); a scoped user finds only their clients' agents.
 */

let portal: TestPortal;
let admin: string;
useFleetPortal((f) => ({ portal, admin } = f));

const fleet = (token: string, query: string) =>
  http(portal.url, 'GET', `/api/health?agents=true&${query}`, { headers: withToken(token) });
const found = (res: { body: { agents: { agent_id: string }[] } }) => res.body.agents.map((a) => a.agent_id).sort();

describe('GET /api/health?agents=true&q= (the fleet search)', () => {
  let clientA: string;
  let clientB: string;
  let user: ScopedUser;

  beforeAll(async () => {
    clientA = uniqueClientId('srcha');
    clientB = uniqueClientId('srchb');
    const keyA = (await createLicense(portal, { tier: 'msp', client_id: clientA })).key;
    const keyB = (await createLicense(portal, { tier: 'msp', client_id: clientB })).key;
    const agents: Array<[string, string, string, unknown]> = [
      [keyA, 'svcd_srch_a1', 'raspberrypi', ['10.99.0.17', 'fd00::17']],
      [keyA, 'svcd_srch_a2', 'Office-RaspberryPi', ['10.99.0.170']],
      [keyA, 'svcd_srch_a3', 'edge_01', ['192.168.7.1']],
      [keyA, 'svcd_srch_a4', 'edgex01', 'not a list'],
      [keyB, 'svcd_srch_b1', 'raspberrypi', ['10.99.0.171']],
      [keyB, 'SVCD_Other_b2', 'nas', []],
    ];
    for (const [key, agent_id, hostname, ip_addresses] of agents) {
      const res = await http(portal.url, 'POST', '/api/health', {
        headers: withKey(key),
        json: {
          agent_id,
          version: '4.2.3',
          timestamp: new Date().toISOString(),
          status: 'running',
          uptime_seconds: 60,
          system_info: { hostname, ip_addresses },
        },
      });
      expect(res.status, res.text).toBe(200);
    }
    user = await createScopedUser(portal, [clientA]);
  });

  it('finds host names containing the term, whatever its case, with the counts of what matches', async () => {
    const res = await fleet(admin, 'q=RASPBERRY');
    expect(res.status).toBe(200);
    expect(found(res)).toEqual(['svcd_srch_a1', 'svcd_srch_a2', 'svcd_srch_b1']);
    expect(res.body.counts).toEqual({ online: 3, stale: 0, deregistered: 0 });
    expect(res.body.agents.map((a: { hostname: string }) => a.hostname).sort()).toEqual([
      'Office-RaspberryPi',
      'raspberrypi',
      'raspberrypi',
    ]);
  });

  it('takes `_` as itself, not as any character', async () => {
    expect(found(await fleet(admin, 'q=edge_'))).toEqual(['svcd_srch_a3']);
    expect(found(await fleet(admin, 'q=edge'))).toEqual(['svcd_srch_a3', 'svcd_srch_a4']);
  });

  it('matches a whole address exactly and a partial one by its start', async () => {
    expect(found(await fleet(admin, 'q=10.99.0.17'))).toEqual(['svcd_srch_a1']);
    expect(found(await fleet(admin, 'q=10.99.0.17&client_id=' + clientB))).toEqual([]);
    expect(found(await fleet(admin, 'q=10.99.0.'))).toEqual(['svcd_srch_a1', 'svcd_srch_a2', 'svcd_srch_b1']);
    expect(found(await fleet(admin, 'q=FD00::17'))).toEqual(['svcd_srch_a1']);
    // The middle of an address is not its start.
    expect(found(await fleet(admin, 'q=99.0.17'))).toEqual([]);
  });

  it('matches agent ids by their start, whatever the case', async () => {
    expect(found(await fleet(admin, 'q=svcd_srch_a'))).toEqual([
      'svcd_srch_a1',
      'svcd_srch_a2',
      'svcd_srch_a3',
      'svcd_srch_a4',
    ]);
    expect(found(await fleet(admin, 'q=svcd_other'))).toEqual(['SVCD_Other_b2']);
    expect(found(await fleet(admin, 'q=srch_a1'))).toEqual([]);
  });

  it('pages the matches by agent id', async () => {
    const first = await fleet(admin, 'q=raspberry&limit=2');
    expect(first.body.agents.map((a: { agent_id: string }) => a.agent_id)).toEqual(['svcd_srch_a1', 'svcd_srch_a2']);
    expect(first.body.next_cursor).toBe('svcd_srch_a2');
    const second = await fleet(admin, `q=raspberry&limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.agents.map((a: { agent_id: string }) => a.agent_id)).toEqual(['svcd_srch_b1']);
    expect(second.body.next_cursor).toBeNull();
  });

  it("lets a customer user find only their clients' agents", async () => {
    const res = await fleet(user.token, 'q=raspberrypi');
    expect(res.status).toBe(200);
    expect(found(res)).toEqual(['svcd_srch_a1', 'svcd_srch_a2']);
    expect(res.body.counts).toEqual({ online: 2, stale: 0, deregistered: 0 });
    expect(found(await fleet(user.token, 'q=10.99.0.171'))).toEqual([]);
    expect(found(await fleet(user.token, 'q=svcd_srch_b'))).toEqual([]);
    const other = await fleet(user.token, `q=raspberrypi&client_id=${clientB}`);
    expect(other.status).toBe(200);
    expect(other.body.agents).toEqual([]);
  });

  const pattern = `Invalid query: q must match pattern "${AGENT_SEARCH_PATTERN}"`;
  it.each([
    ['empty', 'q=', 'Invalid query: q must NOT have fewer than 1 characters'],
    ['a wildcard', 'q=%25', pattern],
    ['a space', 'q=rasp%20berry', pattern],
    [
      'too long',
      `q=${'a'.repeat(AGENT_SEARCH_MAX_LENGTH + 1)}`,
      'Invalid query: q must NOT have more than 128 characters',
    ],
  ])('refuses a term that is %s with 400', async (_what, query, error) => {
    for (const token of [admin, user.token]) {
      const res = await fleet(token, query);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error });
    }
  });

  it('takes the longest term allowed', async () => {
    const res = await fleet(admin, `q=${'a'.repeat(AGENT_SEARCH_MAX_LENGTH)}`);
    expect(res.status).toBe(200);
    expect(res.body.agents).toEqual([]);
  });
});
