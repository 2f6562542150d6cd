import { Type, type Static } from '@sinclair/typebox';

/** ISO 8601 timestamp as the portal writes it (`Date#toISOString`). */
export const IsoDateTime = Type.String({ format: 'date-time', description: 'ISO 8601 timestamp' });

/** docs/api.md#error-body-and-status-codes: every error body is `{"error": "<message>"}`; extra fields are allowed. */
export const ErrorBody = Type.Object(
  { error: Type.String() },
  { additionalProperties: true, description: 'Error body (docs/api.md#error-body-and-status-codes)' },
);
export type ErrorBody = Static<typeof ErrorBody>;

export const OkBody = Type.Object({ ok: Type.Literal(true) });
export type OkBody = Static<typeof OkBody>;

/** Client identifiers tag sessions, keys and agents; kept to a safe, printable alphabet. */
export const CLIENT_ID_RULES = { minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9_.:@-]*$' };
export const ClientId = Type.String(CLIENT_ID_RULES);

/**
 * docs/api.md#ids-are-per-client: the client id of what the legacy key uploaded or registered
 * without one. Sessions and agents are keyed by (client_id, id), and a key column cannot be
 * NULL, so it is stored as the empty id (no real one is empty: ClientId's minLength); answers
 * show it as `client_id: null`, and a request names it with an empty `client_id=`.
 */
export const NO_CLIENT = '';
