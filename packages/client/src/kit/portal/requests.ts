import type { RequestSpec } from '../http/request.ts';
import { endpoint, type PortalTarget } from './target.ts';
import { PortalError } from './errors.ts';

/**
 * One builder per portal call (docs/api.md). Builders only describe the request; the
 * caller sends it (http/request.ts send) or prints it (toCurl). A builder that needs a
 * credential the target lacks fails with a `credentials` PortalError naming the setting.
 */
function withKey(target: PortalTarget): Record<string, string> {
  if (target.apiKey === null)
    throw new PortalError(
      'credentials',
      'No API key: pass -k <key> or set SVC_API_KEY (or SVC_LICENSE_KEY, CONSULTATION_API_KEY, ~/.svc/license.key)',
    );
  return { 'x-api-key': target.apiKey };
}

function withJwt(target: PortalTarget): Record<string, string> {
  if (target.jwt === null)
    throw new PortalError('credentials', 'No identity token: pass -j <jwt> or set SVC_JWT (or CONSULTATION_JWT)');
  return { 'x-identity-token': target.jwt };
}

function url(
  target: PortalTarget,
  name: Parameters<typeof endpoint>[1],
  query: Record<string, string | undefined> = {},
): string {
  const u = new URL(endpoint(target, name));
  for (const [k, v] of Object.entries(query)) if (v !== undefined) u.searchParams.set(k, v);
  return u.toString();
}

export function healthRequest(target: PortalTarget, opts: { agents?: boolean } = {}): RequestSpec {
  return opts.agents
    ? { method: 'GET', url: url(target, 'health', { agents: 'true' }), headers: withJwt(target) }
    : { method: 'GET', url: url(target, 'health'), headers: {} };
}

export function licenseRequest(target: PortalTarget): RequestSpec {
  return { method: 'GET', url: url(target, 'license'), headers: withKey(target) };
}

export interface UploadFiles {
  session: string;
  log?: string | undefined;
  report?: string | undefined;
  exec?: string | undefined;
}

/** POST /api/upload: multipart with session_json and the optional log and reports. */
export function uploadRequest(target: PortalTarget, files: UploadFiles): RequestSpec {
  const parts = [{ name: 'session_json', file: files.session, contentType: 'application/json' }];
  if (files.log !== undefined) parts.push({ name: 'pipeline_log', file: files.log, contentType: 'text/plain' });
  if (files.report !== undefined) parts.push({ name: 'report_html', file: files.report, contentType: 'text/html' });
  if (files.exec !== undefined) parts.push({ name: 'exec_summary_html', file: files.exec, contentType: 'text/html' });
  return { method: 'POST', url: url(target, 'upload'), headers: withKey(target), body: { kind: 'multipart', parts } };
}

/** GET /api/download: with the key, or the JWT when there is no key. */
export function downloadRequest(target: PortalTarget, sessionId: string, file?: string): RequestSpec {
  const headers = target.apiKey !== null ? withKey(target) : withJwt(target);
  return { method: 'GET', url: url(target, 'download', { session: sessionId, file }), headers };
}

/** GET /api/sessions/latest-state: the client's latest session of a target, for the next scan's remediation. */
export function latestStateRequest(target: PortalTarget, scanTarget: string, clientId?: string): RequestSpec {
  return {
    method: 'GET',
    url: url(target, 'sessions/latest-state', { target: scanTarget, client_id: clientId }),
    headers: withKey(target),
  };
}

/**
 * GET /api/vuln-index: the index as its stored gzip bytes, conditional on the version a cached
 * copy has (its ETag).
 */
export function vulnIndexRequest(target: PortalTarget, version?: string): RequestSpec {
  const headers: Record<string, string> = { ...withKey(target), 'accept-encoding': 'gzip' };
  if (version !== undefined) headers['if-none-match'] = `"${version}"`;
  return { method: 'GET', url: url(target, 'vuln-index'), headers };
}

export function shareRequest(target: PortalTarget, token: string): RequestSpec {
  return { method: 'GET', url: url(target, 'share', { token }), headers: {} };
}

export function refreshRequest(target: PortalTarget, sessionId: string, file: string, input: string): RequestSpec {
  return {
    method: 'PUT',
    url: url(target, 'refresh', { session: sessionId, file }),
    headers: withKey(target),
    body: { kind: 'file', file: input, contentType: 'text/html' },
  };
}

export function benchmarkRequest(target: PortalTarget, sessionId: string): RequestSpec {
  const headers = target.apiKey !== null ? withKey(target) : withJwt(target);
  return { method: 'GET', url: url(target, 'benchmark', { session: sessionId }), headers };
}

export function heartbeatRequest(target: PortalTarget, payload: string): RequestSpec {
  return {
    method: 'POST',
    url: url(target, 'health'),
    headers: withKey(target),
    body: { kind: 'json', text: payload },
  };
}

/** GET /api/agent-commands?agent_id=: the daemon's poll for its pending commands. */
export function agentPollRequest(target: PortalTarget, agentId: string): RequestSpec {
  return { method: 'GET', url: url(target, 'agent-commands', { agent_id: agentId }), headers: withKey(target) };
}

export function commandStatusRequest(target: PortalTarget, payload: string): RequestSpec {
  return {
    method: 'PATCH',
    url: url(target, 'agent-commands'),
    headers: withKey(target),
    body: { kind: 'json', text: payload },
  };
}

export function sessionsRequest(target: PortalTarget, query: Record<string, string | undefined> = {}): RequestSpec {
  return { method: 'GET', url: url(target, 'sessions', query), headers: withJwt(target) };
}

/** DELETE /api/sessions?session=: with the key (its own fresh, untriaged uploads only: docs/api.md#sessions), or the JWT. */
export function deleteSessionRequest(target: PortalTarget, sessionId: string): RequestSpec {
  const headers = target.apiKey !== null ? withKey(target) : withJwt(target);
  return { method: 'DELETE', url: url(target, 'sessions', { session: sessionId }), headers };
}
