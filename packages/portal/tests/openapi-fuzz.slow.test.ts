import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense, createScopedUser, uniqueClientId } from '@svc/test-support/factories';
import { LEGACY_KEY, startTestPortal, type TestPortal } from '@svc/test-support/portal';

/**
 * Every operation of /api/openapi.json (and the /identity routes, listed
 * by hand: they are not in the document) gets hostile values in each of its parameters and
 * body fields, without credentials, with an admin JWT and with a license key. No answer may be
 * a 5xx. Bounded: a fixed list of values, requests 8 at a time.
 */

/** A value as JSON text: deep nesting is built as text (no recursive serialiser touches it). */
class RawJson {
  readonly json: string;
  constructor(json: string) {
    this.json = json;
  }
}
const deep = (n: number) => new RawJson('['.repeat(n) + ']'.repeat(n));
const HOSTILE: unknown[] = [
  'a\u0000b',
  '\uD800',
  'x'.repeat(100_000),
  deep(5_000),
  { nested: { object: true } },
  [],
  -1,
  1e308,
  // One below PostgreSQL's bigint range: it must be refused, not rounded into it.
  // biome-ignore lint/correctness/noPrecisionLoss: the value is meant to be past 2^63
  -9_223_372_036_854_775_809,
  1.5,
  true,
  null,
  '\u2028\u2029\u202e',
  '../../../../etc/passwd',
  '%00%2e%2e%2f',
  '',
  ' ',
  '2025-13-45T99:99:99Z',
  'svc_pro_' + 'g'.repeat(64),
];

/** Percent-encoded; a lone surrogate (not encodable) becomes the invalid UTF-8 bytes a client could still send. */
function enc(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return encodeURIComponent(text.replace(/[\uD800-\uDFFF]/g, '')) + '%ED%A0%80';
  }
}

interface Operation {
  method: string;
  path: string;
  pathParams: string[];
  query: string[];
  body: string[];
}

function operationsOf(doc: any): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const params: any[] = op.parameters ?? [];
      const schema = op.requestBody?.content?.['application/json']?.schema;
      const props = (s: any): string[] => [
        ...Object.keys(s?.properties ?? {}),
        ...(s?.anyOf ?? s?.oneOf ?? []).flatMap(props),
      ];
      ops.push({
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        query: params.filter((p) => p.in === 'query').map((p) => p.name),
        body: [...new Set(props(schema))],
      });
    }
  }
  return ops;
}

const IDENTITY: Operation[] = [
  {
    method: 'POST',
    path: '/identity/token',
    pathParams: [],
    query: [],
    body: ['grant_type', 'username', 'password', 'refresh_token', 'scope', 'client_id'],
  },
  { method: 'GET', path: '/identity/user', pathParams: [], query: [], body: [] },
  { method: 'GET', path: '/identity/admin/users', pathParams: [], query: ['id', 'email', 'limit', 'offset'], body: [] },
  {
    method: 'POST',
    path: '/identity/admin/users',
    pathParams: [],
    query: [],
    body: ['email', 'password', 'role', 'client_ids'],
  },
  {
    method: 'PATCH',
    path: '/identity/admin/users',
    pathParams: [],
    query: ['id'],
    body: ['password', 'role', 'client_ids'],
  },
  { method: 'DELETE', path: '/identity/admin/users', pathParams: [], query: ['id'], body: [] },
  { method: 'POST', path: '/identity/revoke', pathParams: [], query: [], body: ['token', 'token_type_hint'] },
  // Not POST /identity/user/sessions/revoke: it takes no input, and would end the admin token the other cases use.
  { method: 'POST', path: '/identity/admin/users/sessions/revoke', pathParams: [], query: ['id'], body: [] },
];

const SELF_SIGN_OUT = '/identity/user/sessions/revoke';

describe('OpenAPI-driven fuzzing', () => {
  let portal: TestPortal;
  let ops: Operation[];
  let credentials: Record<string, Record<string, string>>;
  let signOutToken = '';
  beforeAll(async () => {
    portal = await startTestPortal();
    const token = await portal.adminToken();
    signOutToken = (await createScopedUser(portal, [uniqueClientId('fuzz')])).token;
    const { key } = await createLicense(portal, { tier: 'msp' });
    credentials = { none: {}, admin: { 'x-identity-token': token }, key: { 'x-api-key': key } };
    const doc = await (await fetch(`${portal.url}/api/openapi.json`)).json();
    // Self sign-out everywhere would end the admin token every other case uses: it gets its own case below.
    ops = [...operationsOf(doc), ...IDENTITY].filter((op) => op.path !== SELF_SIGN_OUT);
  });
  afterAll(() => portal.close());

  it('no operation answers 5xx to hostile parameters and fields', { timeout: 360_000 }, async () => {
    expect(ops.length).toBeGreaterThan(30);
    const requests: { label: string; run: () => Promise<number> }[] = [];
    for (const op of ops) {
      for (const [who, headers] of Object.entries(credentials)) {
        const auth =
          op.path.startsWith('/identity/') && who === 'admin'
            ? { authorization: `Bearer ${headers['x-identity-token']}` }
            : headers;
        const send = (path: string, body: string | undefined) => async () => {
          const res = await fetch(`${portal.url}${path}`, {
            method: op.method,
            headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
            ...(body === undefined ? {} : { body }),
          });
          await res.arrayBuffer();
          return res.status;
        };
        const basePath = op.pathParams.reduce((p, name) => p.replace(`{${name}}`, 'x'), op.path);
        const hasBody = op.method !== 'GET' && op.method !== 'DELETE';
        for (const value of HOSTILE) {
          const json = value instanceof RawJson ? value.json : JSON.stringify(value);
          const text = typeof value === 'string' ? value : json;
          const short = text.length > 40 ? `${text.slice(0, 40)}...` : text;
          for (const name of op.pathParams) {
            requests.push({
              label: `${who} ${op.method} ${op.path} path ${name}=${short}`,
              run: send(op.path.replace(`{${name}}`, enc(text.slice(0, 2000))), hasBody ? '{}' : undefined),
            });
          }
          for (const name of op.query) {
            requests.push({
              label: `${who} ${op.method} ${op.path} ?${name}=${short}`,
              run: send(`${basePath}?${name}=${enc(text.slice(0, 20_000))}`, hasBody ? '{}' : undefined),
            });
          }
          if (hasBody) {
            for (const name of op.body)
              requests.push({
                label: `${who} ${op.method} ${op.path} body.${name}=${short}`,
                run: send(basePath, `{${JSON.stringify(name)}:${json}}`),
              });
            requests.push({ label: `${who} ${op.method} ${op.path} body=${short}`, run: send(basePath, json) });
          }
        }
      }
    }
    const failures: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < requests.length) {
        const r = requests[next++] as (typeof requests)[number];
        const status = await r.run().catch(() => -1);
        if (status >= 500 || status < 0) failures.push(`${status} ${r.label}`);
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    expect(requests.length).toBeGreaterThan(1000);
    expect(failures).toEqual([]);
  });

  it('self sign-out everywhere answers no 5xx to hostile bodies', async () => {
    const statuses: number[] = [];
    // Another user's token, taken before the cases above spent the token endpoint's rate limit:
    // the first call ends it, so the later ones are also the refusal of an ended session.
    for (const value of HOSTILE) {
      const token = signOutToken;
      const body = value instanceof RawJson ? value.json : JSON.stringify(value);
      const res = await fetch(`${portal.url}${SELF_SIGN_OUT}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body,
      });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
  });

  /**
   * Racing requests on the same agents, each batch sent all at once: legacy
   * heartbeats cycling client_ids (first registrations and moves), a license key taking the
   * legacy agent over, admin commands, group joins, deregister/re-enable, polls and status
   * reports. Conflicts are 4xx; no answer may be a 5xx. Bounded: 6 rounds of at most 54 requests.
   */
  it('no answer is a 5xx when requests race on one agent', { timeout: 180_000 }, async () => {
    const token = credentials['admin']?.['x-identity-token'] as string;
    const failures: string[] = [];
    const send = async (
      label: string,
      method: string,
      path: string,
      headers: Record<string, string>,
      body?: unknown,
    ) => {
      const status = await fetch(`${portal.url}${path}`, {
        method,
        headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
        .then(async (res) => {
          await res.arrayBuffer();
          return res.status;
        })
        .catch(() => -1);
      if (status >= 500 || status < 0) failures.push(`${status} ${label}`);
    };
    const beat = (agentId: string, clientId?: string) => ({
      agent_id: agentId,
      version: '4.2.3',
      timestamp: '2025-06-01T12:00:00.000Z',
      status: 'running',
      uptime_seconds: 1,
      ...(clientId === undefined ? {} : { client_id: clientId }),
    });
    const legacy = { 'x-api-key': LEGACY_KEY };
    const admin = { 'x-identity-token': token };
    for (let round = 0; round < 6; round++) {
      const id = `svcd_race${round}_${Date.now().toString(16)}`;
      const clients = [uniqueClientId('race'), uniqueClientId('race'), uniqueClientId('race')] as const;
      // From round 3 on, the legacy key registers the agent under the third client, which then
      // gets a key of its own that races to take the agent over.
      let licensed: { key: string } | null = null;
      if (round >= 3) {
        await send('legacy first heartbeat', 'POST', '/api/health', legacy, beat(id, clients[2]));
        licensed = await createLicense(portal, { tier: 'msp', client_id: clients[2] });
      }
      const batch: Promise<void>[] = [];
      for (let i = 0; i < 12; i++) {
        const client = clients[i % 3] as string;
        batch.push(send(`legacy heartbeat ${client}`, 'POST', '/api/health', legacy, beat(id, client)));
        batch.push(send('legacy heartbeat', 'POST', '/api/health', legacy, beat(id)));
        if (i % 4 === 0) {
          batch.push(
            send('queue', 'POST', '/api/agent-commands', admin, {
              agent_id: id,
              client_id: client,
              command_type: 'restart',
            }),
            send('group', 'POST', '/api/agent-groups', admin, {
              agent_id: id,
              client_id: client,
              group_name: `g${round}`,
            }),
            send('broadcast', 'POST', '/api/agent-commands', admin, {
              group_target: `g${round}`,
              all_clients: true,
              command_type: 'restart',
            }),
            send('poll', 'GET', `/api/agent-commands?agent_id=${id}`, legacy),
            send('report', 'PATCH', '/api/agent-commands', legacy, { command_id: 1, agent_id: id, status: 'acked' }),
            send('deregister', 'PATCH', '/api/agents', admin, {
              agent_id: id,
              client_id: client,
              action: 'deregister',
            }),
            send('reenable', 'PATCH', '/api/agents', admin, { agent_id: id, client_id: client, action: 'reenable' }),
          );
        }
        if (licensed && i % 2 === 0)
          batch.push(send('license heartbeat', 'POST', '/api/health', { 'x-api-key': licensed.key }, beat(id)));
      }
      await Promise.all(batch);
    }
    expect(failures).toEqual([]);
  });
});
