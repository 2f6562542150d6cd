import type { TSchema, Static } from '@sinclair/typebox';
import {
  BenchmarkResponse,
  HealthResponse,
  HeartbeatResponse,
  LatestStateResponse,
  LicenseValidation,
  PollResponse,
  RefreshResponse,
  SessionListResponse,
  ShareResponse,
  StatusReportResponse,
  UploadResponse,
  type HeartbeatBody,
  type SessionsQuery,
  type StatusReportBody,
} from '@svc/protocol';
import { HttpError, type HttpResponse, type RequestSpec, send, type Transport } from '../http/request.ts';
import { checkedAnswer, refusalOf } from './answers.ts';
import { PortalError } from './errors.ts';
import {
  agentPollRequest,
  benchmarkRequest,
  commandStatusRequest,
  downloadRequest,
  healthRequest,
  latestStateRequest,
  heartbeatRequest,
  licenseRequest,
  refreshRequest,
  sessionsRequest,
  shareRequest,
  uploadRequest,
  vulnIndexRequest,
  type UploadFiles,
} from './requests.ts';
import type { PortalTarget } from './target.ts';
import { checkUploadSize, uploadTimeoutMs } from './upload-size.ts';

/** What GET /api/vuln-index answered. */
export type VulnIndexAnswer =
  /** The index's JSON, as sent (`gzipped` when the portal sent its stored gzip bytes). */
  | { kind: 'index'; body: Buffer; gzipped: boolean }
  /** 304: the version asked about is still the current one. */
  | { kind: 'not_modified' }
  /** 404: the portal has no index (no feeds imported); the portal's message. */
  | { kind: 'none'; message: string };

export interface PortalClientOptions {
  target: PortalTarget;
  /** Per call; defaults to the target's timeout. */
  timeoutMs?: number;
  /** Another transport (through a proxy, a test double); node:http(s) by default. */
  transport?: Transport;
}

/**
 * The portal's API as typed calls (docs/api.md), for the CLI, the scanner and the agent
 * daemon alike. Each call sends the one RequestSpec its builder in requests.ts describes (the
 * same one `api-debug --show-curl` prints), so the curl shown and the request sent cannot differ.
 * Requests and answers are the protocol package's types; an answer is checked against its schema
 * before it is returned. Every failure is a PortalError; nothing here knows about the CLI.
 */
export interface PortalClient {
  readonly target: PortalTarget;
  /** GET /api/health (public liveness). */
  health(): Promise<HealthResponse>;
  /** GET /api/license with the target's key, or with `key` when given (validating another key). */
  license(key?: string): Promise<LicenseValidation>;
  /** POST /api/upload of session_results.json and its optional log and reports. */
  upload(files: UploadFiles): Promise<UploadResponse>;
  /** PUT /api/refresh: replace a session's report.html or exec_summary.html with the file `input`. */
  refresh(sessionId: string, file: string, input: string): Promise<Static<typeof RefreshResponse>>;
  /** GET /api/download: the stored file's bytes (session_results.json when `file` is omitted). */
  download(sessionId: string, file?: string): Promise<Buffer>;
  /** GET /api/sessions/latest-state: the remediation state of the key's client's latest session of `scanTarget`. */
  latestState(scanTarget: string, clientId?: string): Promise<LatestStateResponse>;
  /** GET /api/vuln-index with the key, conditional on `version` (a cached copy's). */
  vulnIndex(version?: string): Promise<VulnIndexAnswer>;
  /** GET /api/share: what the token's holder may see of its session. */
  share(token: string): Promise<ShareResponse>;
  /** GET /api/benchmark for one session. */
  benchmark(sessionId: string): Promise<BenchmarkResponse>;
  /** GET /api/sessions (JWT). */
  sessions(query?: Partial<Record<keyof SessionsQuery, string>>): Promise<Static<typeof SessionListResponse>>;
  /** POST /api/health: an agent's heartbeat; the answer carries its delivered commands. */
  heartbeat(body: HeartbeatBody): Promise<HeartbeatResponse>;
  /** GET /api/agent-commands?agent_id=: an agent's poll for its pending commands. */
  pollCommands(agentId: string): Promise<Static<typeof PollResponse>>;
  /** PATCH /api/agent-commands: an agent reports a command's status. */
  reportCommandStatus(body: StatusReportBody): Promise<Static<typeof StatusReportResponse>>;
  /**
   * Sends a description as it is and returns the answer whatever its status (api-debug and
   * the smoke test judge statuses themselves); transport failures are PortalErrors.
   */
  exchange(spec: RequestSpec): Promise<HttpResponse>;
}

export function createPortalClient(opts: PortalClientOptions): PortalClient {
  const { target } = opts;
  const timeoutMs = opts.timeoutMs ?? target.timeoutS * 1000;

  async function exchange(spec: RequestSpec, ms = timeoutMs): Promise<HttpResponse> {
    try {
      return await (opts.transport ?? send)(spec, ms);
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      throw new PortalError(err.kind === 'network' ? 'unreachable' : err.kind, err.message);
    }
  }

  /** An answer other than the call's success as an `http` error carrying the portal's message. */
  function refused(res: HttpResponse): PortalError {
    const { portalError, reason, details } = refusalOf(res.body.toString('utf8'));
    return new PortalError('http', `HTTP ${res.status} ${reason}`.trimEnd(), {
      status: res.status,
      portalError,
      details,
    });
  }

  /** The 200 answer's bytes; any other status is an `http` error carrying the portal's message. */
  async function ok(spec: RequestSpec, ms = timeoutMs): Promise<HttpResponse> {
    const res = await exchange(spec, ms);
    if (res.status !== 200) throw refused(res);
    return res;
  }

  async function vulnIndex(version?: string): Promise<VulnIndexAnswer> {
    const res = await exchange(vulnIndexRequest(target, version));
    if (res.status === 304) return { kind: 'not_modified' };
    if (res.status === 404) {
      const { portalError, reason } = refusalOf(res.body.toString('utf8'));
      return { kind: 'none', message: portalError ?? reason };
    }
    if (res.status !== 200) throw refused(res);
    return { kind: 'index', body: res.body, gzipped: res.headers['content-encoding'] === 'gzip' };
  }

  async function call<S extends TSchema>(build: () => RequestSpec, schema: S, ms = timeoutMs): Promise<Static<S>> {
    const spec = build();
    const res = await ok(spec, ms);
    return checkedAnswer(schema, res.status, res.body.toString('utf8'), `${spec.method} ${new URL(spec.url).pathname}`);
  }

  return {
    target,
    health: () => call(() => healthRequest(target), HealthResponse),
    license: (key) =>
      call(() => licenseRequest(key === undefined ? target : { ...target, apiKey: key }), LicenseValidation),
    upload: async (files) => {
      const spec = uploadRequest(target, files);
      const bytes = await checkUploadSize(target, spec);
      return call(() => spec, UploadResponse, uploadTimeoutMs(timeoutMs, bytes));
    },
    refresh: (sessionId, file, input) => call(() => refreshRequest(target, sessionId, file, input), RefreshResponse),
    download: async (sessionId, file) => (await ok(downloadRequest(target, sessionId, file))).body,
    latestState: (scanTarget, clientId) =>
      call(() => latestStateRequest(target, scanTarget, clientId), LatestStateResponse),
    vulnIndex,
    share: (token) => call(() => shareRequest(target, token), ShareResponse),
    benchmark: (sessionId) => call(() => benchmarkRequest(target, sessionId), BenchmarkResponse),
    sessions: (query = {}) => call(() => sessionsRequest(target, query), SessionListResponse),
    heartbeat: (body) => call(() => heartbeatRequest(target, JSON.stringify(body)), HeartbeatResponse),
    pollCommands: (agentId) => call(() => agentPollRequest(target, agentId), PollResponse),
    reportCommandStatus: (body) => call(() => commandStatusRequest(target, JSON.stringify(body)), StatusReportResponse),
    exchange,
  };
}
