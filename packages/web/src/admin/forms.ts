import {
  AUDIT_EVENT_TYPES,
  AUDIT_MAX_DAYS,
  type AuditQuery,
  ClientId,
  type CreateLicenseBody,
  type CreateUserBody,
  type CreateWebhookBody,
  Email,
  LIMIT_MAX,
  Password,
  ROLES,
  isValidSessionId,
  TIERS,
  WEBHOOK_EVENT_TYPES,
} from '@svc/protocol';

/**
 * The administration forms' bodies, built from input strings and checked against the
 * protocol's schemas' own limits before sending, so a refusal names the field in plain
 * words; the portal checks again and its message is shown when it refuses.
 */

export type Draft<T> = { ok: true; body: T } | { ok: false; message: string };

const CLIENT_ID = new RegExp(ClientId.pattern as string);
const EMAIL = new RegExp(Email.pattern as string);

function clientIdProblem(value: string, label = 'Client id'): string | null {
  if (value.length > (ClientId.maxLength as number)) return `${label} is too long`;
  return CLIENT_ID.test(value) ? null : `${label} must start with a letter or digit and use letters, digits, _ . : @ -`;
}

/** A limit input: empty is the tier default (left out); otherwise a whole number from 1. */
function limitOf(raw: string, label: string): { ok: true; value: number | undefined } | { ok: false; message: string } {
  const v = raw.trim();
  if (v === '') return { ok: true, value: undefined };
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > LIMIT_MAX)
    return { ok: false, message: `${label} must be a whole number from 1 to ${LIMIT_MAX}` };
  return { ok: true, value: Number(v) };
}

export interface LicenseForm {
  tier: string;
  client_id: string;
  name: string;
  description: string;
  max_sessions: string;
  max_agents: string;
  /** `YYYY-MM-DD` from a date input; the key expires at the end of that day (UTC). Empty: never. */
  expires_on: string;
}

export function draftLicense(form: LicenseForm): Draft<CreateLicenseBody> {
  const tier = TIERS.find((t) => t === form.tier);
  if (tier === undefined) return { ok: false, message: `Tier must be one of ${TIERS.join(', ')}` };
  const clientId = form.client_id.trim();
  const clientProblem = clientIdProblem(clientId);
  if (clientProblem) return { ok: false, message: clientProblem };
  const name = form.name.trim();
  if (name === '' || name.length > 200) return { ok: false, message: 'Name is required (at most 200 characters)' };
  const body: CreateLicenseBody = { tier, client_id: clientId, name };
  const description = form.description.trim();
  if (description !== '') {
    if (description.length > 2000) return { ok: false, message: 'Description is at most 2000 characters' };
    body.description = description;
  }
  for (const [key, label] of [
    ['max_sessions', 'Max sessions'],
    ['max_agents', 'Max agents'],
  ] as const) {
    const limit = limitOf(form[key], label);
    if (!limit.ok) return limit;
    if (limit.value !== undefined) body[key] = limit.value;
  }
  const expires = form.expires_on.trim();
  if (expires !== '') {
    const at = /^\d{4}-\d{2}-\d{2}$/.test(expires) ? new Date(`${expires}T23:59:59.999Z`) : null;
    if (at === null || Number.isNaN(at.getTime()) || at.toISOString().slice(0, 10) !== expires)
      return { ok: false, message: 'Expiry must be a date' };
    body.expires_at = at.toISOString();
  }
  return { ok: true, body };
}

export interface UserForm {
  email: string;
  password: string;
  role: string;
  /** Comma- or space-separated client ids; a member sees only these clients. */
  client_ids: string;
}

export const splitList = (raw: string): string[] => [...new Set(raw.split(/[\s,]+/).filter(Boolean))];

export function draftUser(form: UserForm): Draft<CreateUserBody> {
  const email = form.email.trim();
  if (!EMAIL.test(email) || email.length > (Email.maxLength as number))
    return { ok: false, message: 'Email must be an address like name@example.com' };
  if (form.password.length < (Password.minLength as number))
    return { ok: false, message: `Password must be at least ${Password.minLength} characters` };
  const role = ROLES.find((r) => r === form.role);
  if (role === undefined) return { ok: false, message: `Role must be one of ${ROLES.join(', ')}` };
  const clientIds = splitList(form.client_ids);
  for (const id of clientIds) {
    const problem = clientIdProblem(id, `Client id ${JSON.stringify(id.slice(0, 40))}`);
    if (problem) return { ok: false, message: problem };
  }
  if (role === 'member' && clientIds.length === 0)
    return { ok: false, message: 'A member needs at least one client id' };
  return { ok: true, body: { email, password: form.password, role, client_ids: clientIds } };
}

export interface WebhookForm {
  url: string;
  event_types: readonly string[];
  description: string;
  client_id: string;
}

export function draftWebhook(form: WebhookForm): Draft<CreateWebhookBody> {
  const url = form.url.trim();
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    parsed = null;
  }
  if (parsed === null || parsed.protocol !== 'https:' || url.length > 2048)
    return { ok: false, message: 'URL must be an https:// address' };
  const events = WEBHOOK_EVENT_TYPES.filter((t) => form.event_types.includes(t));
  if (events.length === 0) return { ok: false, message: 'Choose at least one event' };
  const body: CreateWebhookBody = { url, event_types: events };
  const description = form.description.trim();
  if (description.length > 500) return { ok: false, message: 'Description is at most 500 characters' };
  if (description !== '') body.description = description;
  const clientId = form.client_id.trim();
  if (clientId !== '') {
    const problem = clientIdProblem(clientId);
    if (problem) return { ok: false, message: problem };
    body.client_id = clientId;
  }
  return { ok: true, body };
}

export interface AuditFilters {
  days: string;
  type: string;
  session: string;
}

/** GET /api/audit's query for the filters, or the first filter the portal would refuse. */
export function auditQuery(filters: AuditFilters, limit: number): Draft<AuditQuery> {
  const q: AuditQuery = {};
  const days = filters.days.trim();
  if (days !== '') {
    if (!/^\d+$/.test(days) || Number(days) < 1 || Number(days) > AUDIT_MAX_DAYS)
      return { ok: false, message: `Days must be a whole number from 1 to ${AUDIT_MAX_DAYS}` };
    q.days = Number(days);
  }
  if (filters.type !== '') {
    const type = AUDIT_EVENT_TYPES.find((t) => t === filters.type);
    if (type === undefined) return { ok: false, message: 'Unknown event type' };
    q.type = type;
  }
  const session = filters.session.trim();
  if (session !== '') {
    if (!isValidSessionId(session)) return { ok: false, message: 'Session id uses letters, digits, _ and - only' };
    q.session = session;
  }
  q.limit = limit;
  return { ok: true, body: q };
}
