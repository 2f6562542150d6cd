/**
 * Errors raised by domain code (licenses, sessions, agents, webhooks, audit, identity, auth).
 *
 * The domain knows what went wrong and says it in the documented words; it does not know HTTP.
 * Each error carries a stable code `<kind>.<what>` (for example `not_found.session`,
 * `conflict.remediation_changed`); the kind alone decides the status, in one table in
 * `http/errors.ts`. Tests and logs may rely on codes; clients see only the message.
 */
export type DomainErrorKind =
  | 'invalid'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'gone'
  | 'too_large'
  /** The portal as a whole has no room left (its storage limit or its disk): 507. */
  | 'insufficient_storage'
  | 'rate_limited'
  | 'unavailable'
  /** The portal's own failure (storage lost or refused a file): 500, never the caller's doing. */
  | 'internal';

export type DomainErrorCode = `${DomainErrorKind}.${string}`;

export interface DomainErrorOptions {
  /** Seconds the caller should wait before retrying (rate_limited, unavailable). */
  retryAfterSeconds?: number;
  /** Extra fields presented beside `error` in the body (a few answers carry them). */
  extra?: Record<string, unknown>;
}

export class DomainError extends Error {
  readonly code: DomainErrorCode;
  readonly kind: DomainErrorKind;
  readonly retryAfterSeconds: number | undefined;
  readonly extra: Record<string, unknown>;
  constructor(code: DomainErrorCode, message: string, opts: DomainErrorOptions = {}) {
    super(message);
    this.name = 'DomainError';
    this.code = code;
    this.kind = code.slice(0, code.indexOf('.')) as DomainErrorKind;
    this.retryAfterSeconds = opts.retryAfterSeconds;
    this.extra = opts.extra ?? {};
  }
}

/** The message of every tier or permission refusal. */
export const insufficientPermissions = (feature: string): DomainError =>
  new DomainError('forbidden.permission', `Insufficient permissions for ${feature}`);
