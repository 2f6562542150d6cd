import { ENVIRONMENTS, isShareToken } from '@svc/protocol';
import { jsonOf, maskSecret, textOf, type HttpResponse, type RequestSpec } from '../kit/http/request.ts';
import {
  deleteSessionRequest,
  downloadRequest,
  healthRequest,
  shareRequest,
  uploadRequest,
} from '../kit/portal/requests.ts';
import { endpoint, type PortalTarget } from '../kit/portal/target.ts';
import { createPortalClient } from '../kit/portal/client.ts';
import { PortalError } from '../kit/portal/errors.ts';

/**
 * The ten checks of `e2e_smoke_test.sh` (docs/cli.md), in the documented
 * order. Each one sends one or more probes and asserts exactly what docs/cli/e2e_smoke_test.md
 * says; the statuses are the portal's (packages/portal/src/api/). The checks run one after
 * the other: the share lookup and the delete check need the session the round-trip uploaded.
 */
export const CHECK_NAMES = [
  'health',
  'health JSON',
  'benchmark auth',
  'benchmark with key',
  'sessions auth',
  'upload method',
  'upload round-trip',
  'share-token lookup',
  'upload auth',
  'delete auth',
] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

export interface CheckResult {
  name: CheckName;
  passed: boolean;
  /** Why it failed (null when it passed). */
  reason: string | null;
  /** What was seen, for --json and the curious (e.g. "key accepted; tier lacks benchmark"). */
  detail: string | null;
}

/** What a run works with: where, as whom, and the generated sessions. */
export interface SmokeSetup {
  target: PortalTarget;
  timeoutS: number;
  /** The session the round-trip uploads (fresh, unique). */
  sessionId: string;
  sessionFile: string;
  /** A second fresh id, for the uploads that must be refused (never the round-trip's). */
  refusedSessionId: string;
  refusedSessionFile: string;
  /** A well-formed license key the portal has never issued. */
  bogusKey: string;
}

/** A request and the credential it carries, as shown in reasons and in --dry-run. */
export interface Probe {
  spec: RequestSpec;
  /** '' for public requests, else e.g. 'without credentials', 'with the key'. */
  as: string;
}

/** What the checks learn as they run. */
export interface SmokeState {
  /** The round-trip's answer, when it passed. */
  upload: { shareToken: string; shareUrl: string } | null;
  /** Session ids the portal may hold because of this run (cleanup deletes them). */
  stored: Set<string>;
  /** Set when the health check got no answer at all: the rest is not attempted. */
  unreachable: string | null;
}

class CheckFailed extends Error {}
/** The portal did not answer (connection refused, reset, timeout). */
class NoAnswer extends CheckFailed {
  /** The bare transport reason, e.g. "Cannot reach http://host:port: ECONNREFUSED". */
  readonly transport: string;
  constructor(message: string, transport: string) {
    super(message);
    this.transport = transport;
  }
}

function fail(reason: string): never {
  throw new CheckFailed(reason);
}

/** Placeholder for values only known while running (the share token in --dry-run). */
export const SHARE_TOKEN_PLACEHOLDER = 'SHARE_TOKEN_FROM_UPLOAD';

// Probe builders. The keyed and public ones come from kit/portal/requests.ts; the variants
// without credentials or with a forged key are the same requests with other headers.
const publicProbe = (spec: RequestSpec): Probe => ({ spec, as: '' });
const keyed = (spec: RequestSpec): Probe => ({ spec, as: 'with the key' });
const anonymous = (spec: RequestSpec): Probe => ({ spec: { ...spec, headers: {} }, as: 'without credentials' });
const withBogusKey = (spec: RequestSpec, bogusKey: string): Probe => ({
  spec: { ...spec, headers: { 'x-api-key': bogusKey } },
  as: 'with a bogus key',
});
const withJwt = (spec: RequestSpec, jwt: string): Probe => ({
  spec: { ...spec, headers: { 'x-identity-token': jwt } },
  as: 'with the JWT',
});

function get(
  target: PortalTarget,
  name: Parameters<typeof endpoint>[1],
  query: Record<string, string> = {},
): RequestSpec {
  const u = new URL(endpoint(target, name));
  for (const [k, v] of Object.entries(query)) u.searchParams.set(k, v);
  return { method: 'GET', url: u.toString(), headers: target.apiKey === null ? {} : { 'x-api-key': target.apiKey } };
}

const benchmarkSpec = (s: SmokeSetup) => get(s.target, 'benchmark', { session: s.sessionId });
const sessionsSpec = (s: SmokeSetup) => get(s.target, 'sessions');
const sessionsPageSpec = (s: SmokeSetup) => get(s.target, 'sessions', { limit: '1' });
const uploadGetSpec = (s: SmokeSetup) => get(s.target, 'upload');
const deleteSpec = (s: SmokeSetup) => deleteSessionRequest(s.target, s.sessionId);

function pathOf(spec: RequestSpec): string {
  try {
    return new URL(spec.url).pathname;
  } catch {
    return spec.url;
  }
}

function label(probe: Probe): string {
  return `${probe.spec.method} ${pathOf(probe.spec)}${probe.as === '' ? '' : ` ${probe.as}`}`;
}

/** The `error` of a JSON error body (docs/api.md#error-body-and-status-codes), else a short piece of the text. */
function errorText(res: HttpResponse): string {
  const body = jsonOf(res) as { error?: unknown } | undefined;
  if (body !== null && typeof body === 'object' && typeof body.error === 'string') return body.error;
  return textOf(res).trim().replace(/\s+/g, ' ').slice(0, 120);
}

/**
 * 404 answers the portal gives for a missing resource of a route that exists; any other
 * 404 (the portal's "Not found: GET /api/x", a proxy's page) means the route is missing.
 */
const RESOURCE_NOT_FOUND = /^(Session not found|Share link not found|File not found)/;

function endpointMissing(res: HttpResponse): boolean {
  return res.status === 404 && !RESOURCE_NOT_FOUND.test(errorText(res));
}

/** `GET /api/share answered 404 (endpoint missing?)`, `POST /api/upload with the key answered 403 (Invalid API key; expected 200)`. */
function unexpected(probe: Probe, res: HttpResponse, expected: string): string {
  if (endpointMissing(res)) return `${label(probe)} answered 404 (endpoint missing?)`;
  const error = errorText(res);
  return `${label(probe)} answered ${res.status} (${error === '' ? '' : `${error}; `}expected ${expected})`;
}

/**
 * The typed client's raw exchange: probes are the builders' descriptions (some with other
 * headers on purpose) and the checks judge every status themselves.
 */
function exchange(setup: SmokeSetup, spec: RequestSpec): Promise<HttpResponse> {
  return createPortalClient({ target: setup.target, timeoutMs: setup.timeoutS * 1000 }).exchange(spec);
}

async function call(setup: SmokeSetup, probe: Probe): Promise<HttpResponse> {
  try {
    return await exchange(setup, probe.spec);
  } catch (err) {
    if (err instanceof PortalError)
      throw err.kind === 'file'
        ? new CheckFailed(err.message)
        : new NoAnswer(`${label(probe)}: ${err.message}`, err.message);
    throw err;
  }
}

async function expectStatus(setup: SmokeSetup, probe: Probe, allowed: number[]): Promise<HttpResponse> {
  const res = await call(setup, probe);
  if (!allowed.includes(res.status)) fail(unexpected(probe, res, allowed.join(' or ')));
  return res;
}

function objectBody(probe: Probe, res: HttpResponse): Record<string, unknown> {
  const body = jsonOf(res);
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    fail(`${label(probe)} answered ${res.status} with a body that is not a JSON object: ${textOf(res).slice(0, 80)}`);
  return body as Record<string, unknown>;
}

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

interface Check {
  name: CheckName;
  /** Needs the session the round-trip uploaded. */
  needsUpload?: boolean;
  probes(setup: SmokeSetup): Probe[];
  /** Resolves with a detail when the check passes; throws CheckFailed otherwise. */
  run(setup: SmokeSetup, state: SmokeState): Promise<string | null>;
}

const CHECKS: Check[] = [
  {
    name: 'health',
    probes: (s) => [publicProbe(healthRequest(s.target))],
    async run(s) {
      const res = await expectStatus(s, publicProbe(healthRequest(s.target)), [200]);
      return `answered in ${res.ms} ms`;
    },
  },
  {
    name: 'health JSON',
    probes: (s) => [publicProbe(healthRequest(s.target))],
    async run(s) {
      const probe = publicProbe(healthRequest(s.target));
      const res = await expectStatus(s, probe, [200]);
      const body = objectBody(probe, res);
      const problems: string[] = [];
      if (body['status'] !== 'ok') problems.push(`status is ${JSON.stringify(body['status'])} (expected "ok")`);
      if (typeof body['version'] !== 'string' || body['version'] === '') problems.push('version is missing');
      const ts = body['timestamp'];
      if (typeof ts !== 'string' || !ISO_8601.test(ts) || Number.isNaN(Date.parse(ts)))
        problems.push(`timestamp is not an ISO 8601 time (${JSON.stringify(ts)})`);
      const environments: readonly unknown[] = [...ENVIRONMENTS, 'unknown'];
      if (!environments.includes(body['environment']))
        problems.push(
          `environment is ${JSON.stringify(body['environment'])} (expected one of ${environments.join(', ')})`,
        );
      if (problems.length > 0) fail(`GET /api/health body: ${problems.join('; ')}`);
      return `version ${String(body['version'])}, environment ${String(body['environment'])}`;
    },
  },
  {
    name: 'benchmark auth',
    probes: (s) => [anonymous(benchmarkSpec(s))],
    async run(s) {
      const res = await expectStatus(s, anonymous(benchmarkSpec(s)), [401, 403]);
      return `refused with ${res.status}`;
    },
  },
  {
    name: 'benchmark with key',
    probes: (s) => [keyed(benchmarkSpec(s))],
    async run(s) {
      // The probe session does not exist yet (the round-trip comes later), so a portal that
      // accepts the key answers 404 "Session not found"; a key whose tier lacks the
      // benchmark permission gets 403 naming it. Both show the key was accepted.
      const probe = keyed(benchmarkSpec(s));
      const res = await call(s, probe);
      const error = errorText(res);
      if (res.status === 200) return 'answered 200';
      if (res.status === 404 && /^Session not found/.test(error))
        return 'key accepted (404 Session not found for the probe session)';
      if (res.status === 403 && error === 'Insufficient permissions for benchmark')
        return 'key accepted; its tier lacks the benchmark permission (403 Insufficient permissions for benchmark)';
      return fail(unexpected(probe, res, '200, 404 Session not found, or 403 Insufficient permissions for benchmark'));
    },
  },
  {
    name: 'sessions auth',
    probes: (s) => [
      anonymous(sessionsSpec(s)),
      keyed(sessionsSpec(s)),
      ...(s.target.jwt === null ? [] : [withJwt(sessionsPageSpec(s), s.target.jwt)]),
    ],
    async run(s) {
      // The listing is for identity JWTs only: a license key is no way in either.
      await expectStatus(s, anonymous(sessionsSpec(s)), [401]);
      await expectStatus(s, keyed(sessionsSpec(s)), [401]);
      if (s.target.jwt === null) return 'refused without a JWT (401); no SVC_JWT configured to try with one';
      await expectStatus(s, withJwt(sessionsPageSpec(s), s.target.jwt), [200]);
      return 'refused without a JWT (401); the configured JWT lists sessions (200)';
    },
  },
  {
    name: 'upload method',
    probes: (s) => [keyed(uploadGetSpec(s))],
    async run(s) {
      const probe = keyed(uploadGetSpec(s));
      const res = await call(s, probe);
      if (res.status !== 404 && res.status !== 405)
        fail(`${label(probe)} answered ${res.status} (expected 404 or 405: uploads are POST only)`);
      return `refused with ${res.status}`;
    },
  },
  {
    name: 'upload round-trip',
    probes: (s) => [keyed(uploadRequest(s.target, { session: s.sessionFile }))],
    async run(s, state) {
      const probe = keyed(uploadRequest(s.target, { session: s.sessionFile }));
      let res: HttpResponse;
      try {
        res = await call(s, probe);
      } catch (err) {
        // No answer: the portal may still have stored it; cleanup will look.
        if (err instanceof NoAnswer) state.stored.add(s.sessionId);
        throw err;
      }
      if (res.status !== 200) fail(unexpected(probe, res, '200'));
      state.stored.add(s.sessionId);
      const body = objectBody(probe, res);
      const problems: string[] = [];
      if (body['success'] !== true) problems.push('success is not true');
      if (body['session_id'] !== s.sessionId)
        problems.push(`session_id is ${JSON.stringify(body['session_id'])} (expected ${s.sessionId})`);
      const token = body['share_token'];
      if (!isShareToken(token)) problems.push('share_token is not 64 hex characters');
      const shareUrl = body['share_url'];
      let urlToken: string | null = null;
      try {
        urlToken = typeof shareUrl === 'string' ? new URL(shareUrl).searchParams.get('token') : null;
      } catch {
        urlToken = null;
      }
      if (typeof shareUrl !== 'string' || urlToken !== token)
        problems.push(`share_url ${JSON.stringify(shareUrl)} does not carry the share token`);
      if (problems.length > 0) fail(`POST /api/upload answered 200 but ${problems.join('; ')}`);
      state.upload = { shareToken: token as string, shareUrl: shareUrl as string };
      return `session ${s.sessionId} stored; share URL ${String(shareUrl)}`;
    },
  },
  {
    name: 'share-token lookup',
    needsUpload: true,
    probes: (s) => [publicProbe(shareRequest(s.target, SHARE_TOKEN_PLACEHOLDER))],
    async run(s, state) {
      const probe = publicProbe(shareRequest(s.target, state.upload!.shareToken));
      const res = await call(s, probe);
      if (res.status === 404 && !endpointMissing(res))
        fail(`${label(probe)} answered 404 (${errorText(res)}): the share token of the uploaded session is unknown`);
      if (res.status !== 200) fail(unexpected(probe, res, '200'));
      const body = objectBody(probe, res);
      if (body['session_id'] !== s.sessionId)
        fail(`${label(probe)} found session ${JSON.stringify(body['session_id'])} (expected ${s.sessionId})`);
      return `found session ${s.sessionId}`;
    },
  },
  {
    name: 'upload auth',
    probes: (s) => {
      const spec = uploadRequest(s.target, { session: s.refusedSessionFile });
      return [anonymous(spec), withBogusKey(spec, s.bogusKey)];
    },
    async run(s, state) {
      const spec = uploadRequest(s.target, { session: s.refusedSessionFile });
      for (const probe of [anonymous(spec), withBogusKey(spec, s.bogusKey)]) {
        const res = await call(s, probe);
        if (res.status === 200) {
          state.stored.add(s.refusedSessionId);
          fail(`${label(probe)} answered 200: the portal stored an upload it should have refused (expected 403)`);
        }
        if (res.status !== 403) fail(unexpected(probe, res, '403'));
      }
      return 'refused without a key and with a bogus key (403)';
    },
  },
  {
    name: 'delete auth',
    needsUpload: true,
    probes: (s) => [
      anonymous(deleteSpec(s)),
      withBogusKey(deleteSpec(s), s.bogusKey),
      keyed(downloadRequest(s.target, s.sessionId)),
    ],
    async run(s) {
      for (const probe of [anonymous(deleteSpec(s)), withBogusKey(deleteSpec(s), s.bogusKey)]) {
        const res = await call(s, probe);
        if (res.status >= 200 && res.status < 300)
          fail(
            `${label(probe)} answered ${res.status}: the session was deleted without valid credentials (expected 401 or 403)`,
          );
        if (res.status !== 401 && res.status !== 403) fail(unexpected(probe, res, '401 or 403'));
      }
      // Still there? Its stored file must still download with the key.
      const probe = keyed(downloadRequest(s.target, s.sessionId));
      const res = await call(s, probe);
      if (res.status !== 200)
        fail(`after the refused deletes, ${unexpected(probe, res, '200: the session should still exist')}`);
      return 'refused without credentials and with a bogus key; the session still exists';
    },
  },
];

export function checkProbes(setup: SmokeSetup): { name: CheckName; probes: Probe[] }[] {
  return CHECKS.map((c) => ({ name: c.name, probes: c.probes(setup) }));
}

/** Runs the checks in order, calling `report` as each one ends. */
export async function runSmokeChecks(
  setup: SmokeSetup,
  state: SmokeState,
  report: (result: CheckResult) => void,
): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  let uploadPassed = false;
  for (const check of CHECKS) {
    let result: CheckResult;
    if (state.unreachable !== null) {
      result = {
        name: check.name,
        passed: false,
        reason: `not attempted: portal unreachable (${state.unreachable})`,
        detail: null,
      };
    } else if (check.needsUpload && !uploadPassed) {
      result = { name: check.name, passed: false, reason: 'skipped: upload round-trip failed', detail: null };
    } else {
      try {
        const detail = await check.run(setup, state);
        result = { name: check.name, passed: true, reason: null, detail };
      } catch (err) {
        if (!(err instanceof CheckFailed)) throw err;
        result = { name: check.name, passed: false, reason: err.message, detail: null };
        // The first check is the liveness probe: without any answer there, every other
        // request would wait out its own timeout for nothing.
        if (err instanceof NoAnswer && check.name === 'health') state.unreachable = err.transport;
      }
    }
    if (check.name === 'upload round-trip') uploadPassed = result.passed;
    results.push(result);
    report(result);
  }
  return results;
}

export interface CleanupResult {
  status: 'deleted' | 'kept' | 'nothing' | 'failed';
  message: string;
}

/**
 * Deletes what the run stored: DELETE /api/sessions?session= with the key (the key that uploaded
 * a session may delete it for 15 minutes while untriaged: docs/api.md#sessions), else with the
 * JWT when one is set. 404 counts as gone.
 */
export async function cleanup(setup: SmokeSetup, state: SmokeState): Promise<CleanupResult> {
  const ids = [...state.stored];
  if (ids.length === 0) return { status: 'nothing', message: 'nothing to delete' };
  const deleted: string[] = [];
  const gone: string[] = [];
  const failures: string[] = [];
  for (const id of ids) {
    const probes = [keyed(deleteSessionRequest(setup.target, id))];
    if (setup.target.jwt !== null) probes.push(withJwt(deleteSessionRequest(setup.target, id), setup.target.jwt));
    let why = '';
    let done = false;
    for (const probe of probes) {
      try {
        const res = await exchange(setup, probe.spec);
        if (res.status === 200 || res.status === 404) {
          (res.status === 200 ? deleted : gone).push(id);
          done = true;
          break;
        }
        why = unexpected(probe, res, '200');
      } catch (err) {
        if (!(err instanceof PortalError)) throw err;
        why = `${label(probe)}: ${err.message}`;
      }
    }
    if (!done) failures.push(`session ${id}: ${why}`);
  }
  if (failures.length > 0) return { status: 'failed', message: failures.join('; ') };
  const parts = [
    deleted.length > 0 ? `deleted session ${deleted.join(', ')}` : '',
    gone.length > 0 ? `session ${gone.join(', ')} not found (already gone, or never stored)` : '',
  ];
  return { status: 'deleted', message: parts.filter((p) => p !== '').join('; ') };
}

/** `GET http://portal/api/benchmark?session=… with the key (svc_biz_****)`: what --dry-run shows. */
export function describeProbe(probe: Probe): string {
  const url = probe.spec.url.replace(SHARE_TOKEN_PLACEHOLDER, '<share_token from the upload>');
  const key = probe.spec.headers['x-api-key'];
  const jwt = probe.spec.headers['x-identity-token'];
  let as = probe.as;
  if (probe.as === 'with the key' && key !== undefined) as = `with the key (${maskSecret(key)})`;
  if (probe.as === 'with a bogus key' && key !== undefined) as = `with a bogus key (${maskSecret(key)})`;
  if (probe.as === 'with the JWT' && jwt !== undefined) as = `with the JWT (${maskSecret(jwt)})`;
  const body = probe.spec.body?.kind === 'multipart' ? ', multipart session_json' : '';
  return `${probe.spec.method} ${url}${as === '' ? '' : ` ${as}`}${body}`;
}

export function keyedDeleteProbe(setup: SmokeSetup): Probe {
  return keyed(deleteSpec(setup));
}
