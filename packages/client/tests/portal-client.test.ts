import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from '../src/kit/http/request.ts';
import { createPortalClient } from '../src/kit/portal/client.ts';
import { PortalError } from '../src/kit/portal/errors.ts';
import type { PortalTarget } from '../src/kit/portal/target.ts';
import { closedPortUrl } from '@svc/test-support/license-fake-portal';
import {
  type Received,
  type RecordingHandler,
  type RecordingServer,
  startRecordingServer,
} from './helpers/recording-server.ts';

/**
 * The typed portal client against a real node:http server on 127.0.0.1 that answers each test's
 * way: good answers, refusals with and without an error body, 5xx, malformed JSON, a wrong shape,
 * no answer at all.
 */

type Handler = RecordingHandler;
let server: RecordingServer;
let seen: Received[];
let base: string;
let work: string;

beforeAll(async () => {
  server = await startRecordingServer();
  ({ seen, base } = server);
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'portal-client-'));
});
afterAll(async () => {
  await server.close();
  await fs.rm(work, { recursive: true, force: true });
});

const KEY = `svc_biz_${'ab'.repeat(32)}`;
const target = (over: Partial<PortalTarget> = {}): PortalTarget => ({
  uploadUrl: `${base}/api/upload`,
  apiKey: KEY,
  jwt: null,
  timeoutS: 5,
  ...over,
});
const json =
  (status: number, value: unknown): Handler =>
  (_req, _body, res) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(typeof value === 'string' ? value : JSON.stringify(value));
  };

/** The PortalError a call fails with (the test fails when it does not fail). */
async function failure(p: Promise<unknown>): Promise<PortalError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PortalError);
  return err as PortalError;
}

const HEALTH = { status: 'ok', version: '1.2.3', timestamp: '2026-11-23T22:00:00.000Z', environment: 'dev' };
const VALIDATION = {
  valid: true,
  tier: 'business',
  client_id: 'acme',
  active: true,
  revoked: false,
  expires_at: null,
  limits: { max_sessions: null, max_agents: null },
  reason: 'ok',
  checked_at: '2026-11-23T22:00:00.000Z',
  legacy: false,
};

describe('typed portal client: answers', () => {
  it('a good answer comes back typed, from the request its builder describes', async () => {
    server.handle(json(200, HEALTH));
    seen.length = 0;
    const answer = await createPortalClient({ target: target() }).health();
    expect(answer).toEqual(HEALTH);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.method).toBe('GET');
    expect(seen[0]?.url).toBe('/api/health');
  });

  it('a 4xx with an error body is an http error carrying status and the portal message', async () => {
    server.handle(json(403, { error: 'License revoked' }));
    const err = await failure(createPortalClient({ target: target() }).license());
    expect({ kind: err.kind, status: err.status, portalError: err.portalError, message: err.message }).toEqual({
      kind: 'http',
      status: 403,
      portalError: 'License revoked',
      message: 'HTTP 403 License revoked',
    });
  });

  it('a 5xx without JSON is an http error with the start of the text', async () => {
    server.handle((_req, _body, res) => {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end('bad gateway');
    });
    const err = await failure(createPortalClient({ target: target() }).health());
    expect({ kind: err.kind, status: err.status, portalError: err.portalError, message: err.message }).toEqual({
      kind: 'http',
      status: 502,
      portalError: null,
      message: 'HTTP 502 bad gateway',
    });
  });

  it('a 200 with malformed JSON is invalid_answer', async () => {
    server.handle(json(200, '{"status": "ok",'));
    const err = await failure(createPortalClient({ target: target() }).health());
    expect({ kind: err.kind, status: err.status, message: err.message }).toEqual({
      kind: 'invalid_answer',
      status: 200,
      message: 'GET /api/health: the portal answered HTTP 200 with a body that is not JSON',
    });
  });

  it('a 200 of the wrong shape is invalid_answer naming the first mismatch', async () => {
    server.handle(json(200, { ...HEALTH, timestamp: 'yesterday' }));
    const err = await failure(createPortalClient({ target: target() }).health());
    expect(err.kind).toBe('invalid_answer');
    expect(err.message).toMatch(
      /^GET \/api\/health: the portal answered HTTP 200 with an unexpected body \(\/timestamp: /,
    );
    server.handle(json(200, [1, 2]));
    const session = path.join(work, 'session_results.json');
    await fs.writeFile(session, '{}');
    const upload = await failure(createPortalClient({ target: target() }).upload({ session }));
    expect({ kind: upload.kind, message: upload.message }).toEqual({
      kind: 'invalid_answer',
      message: 'POST /api/upload: the portal answered HTTP 200 with an unexpected body (/: Expected object)',
    });
  });

  it('a request file that cannot be read is a file error', async () => {
    const err = await failure(
      createPortalClient({ target: target() }).upload({ session: path.join(work, 'missing.json') }),
    );
    expect(err.kind).toBe('file');
    expect(err.message).toMatch(/^Cannot read /);
  });

  it('no answer within the timeout is a timeout error', async () => {
    server.handle((_req, _body, res) => server.hold(res));
    const err = await failure(createPortalClient({ target: target(), timeoutMs: 300 }).health());
    expect({ kind: err.kind, message: err.message }).toEqual({
      kind: 'timeout',
      message: `No answer from ${base} within 0.3 s`,
    });
  });

  it('a closed port is unreachable', async () => {
    const url = await closedPortUrl();
    const err = await failure(createPortalClient({ target: target({ uploadUrl: url }) }).health());
    expect(err.kind).toBe('unreachable');
    expect(err.message).toMatch(/^Cannot reach http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED$/);
  });

  it('a missing credential is a credentials error, and nothing is sent', async () => {
    seen.length = 0;
    const noKey = await failure(createPortalClient({ target: target({ apiKey: null }) }).license());
    expect(noKey.kind).toBe('credentials');
    expect(noKey.message).toMatch(/^No API key: pass -k <key>/);
    const noJwt = await failure(createPortalClient({ target: target() }).sessions());
    expect(noJwt.kind).toBe('credentials');
    expect(noJwt.message).toMatch(/^No identity token: pass -j <jwt>/);
    expect(seen).toEqual([]);
  });

  it('agent calls send the typed bodies as JSON with the key, and check the answers', async () => {
    seen.length = 0;
    server.handle((req, _body, res) => {
      const answers: Record<string, unknown> = {
        'POST /api/health': { success: true, received_at: '2026-11-23T22:00:00.000Z', commands: [] },
        'GET /api/agent-commands?agent_id=pi-1': {
          commands: [
            {
              id: 7,
              command_type: 'restart',
              payload: {},
              priority: 0,
              created_by: 'admin',
              created_at: '2026-11-23T22:00:00.000Z',
              group_target: null,
            },
          ],
        },
        'PATCH /api/agent-commands': { success: true, command_id: 7, status: 'completed' },
      };
      json(200, answers[`${req.method} ${req.url}`] ?? { error: 'no route' })(req, _body, res);
    });
    const client = createPortalClient({ target: target() });
    const beat = await client.heartbeat({
      agent_id: 'pi-1',
      version: '1.0.0',
      timestamp: '2026-11-23T22:00:00Z',
      status: 'idle',
      uptime_seconds: 5,
    });
    expect(beat.commands).toEqual([]);
    const poll = await client.pollCommands('pi-1');
    expect(poll.commands.map((c) => [c.id, c.command_type])).toEqual([[7, 'restart']]);
    const report = await client.reportCommandStatus({
      command_id: 7,
      agent_id: 'pi-1',
      status: 'completed',
      exit_code: 0,
    });
    expect(report).toEqual({ success: true, command_id: 7, status: 'completed' });
    expect(seen.map((s) => [s.method, s.url, s.headers['x-api-key'], s.headers['content-type']])).toEqual([
      ['POST', '/api/health', KEY, 'application/json'],
      ['GET', '/api/agent-commands?agent_id=pi-1', KEY, undefined],
      ['PATCH', '/api/agent-commands', KEY, 'application/json'],
    ]);
    expect(JSON.parse(seen[2]?.body.toString('utf8') ?? '')).toEqual({
      command_id: 7,
      agent_id: 'pi-1',
      status: 'completed',
      exit_code: 0,
    });
  });

  it('a transport of its own is used for every call', async () => {
    const urls: string[] = [];
    const client = createPortalClient({
      target: target(),
      transport: async (spec, timeoutMs) => {
        urls.push(spec.url);
        return send(spec, timeoutMs);
      },
    });
    server.handle(json(200, VALIDATION));
    expect(await client.license()).toEqual(VALIDATION);
    expect(urls).toEqual([`${base}/api/license`]);
  });
});
