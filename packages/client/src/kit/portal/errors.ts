import { printable } from '../text/printable.ts';

/**
 * Every way a portal call can fail, as data: callers (the CLI, the scanner, the daemon)
 * decide what each kind means for them. The CLI ends `credentials` and `config` as a
 * configuration error (exit 2) and every other kind as the portal's failure (exit 1), in one
 * place (endingOf in cli/main.ts).
 */
export type PortalErrorKind =
  /** No answer: connection refused, DNS, reset. */
  | 'unreachable'
  /** No complete answer within the timeout. */
  | 'timeout'
  /** The portal answered a status other than the call's success status. */
  | 'http'
  /** The portal answered the success status with a body that is not the protocol's answer. */
  | 'invalid_answer'
  /** The call needs a credential (API key or JWT) the target lacks. */
  | 'credentials'
  /** The target is not usable (a portal URL that is not a URL, a bad timeout). */
  | 'config'
  /** A file the request sends cannot be read. */
  | 'file'
  /** The upload is over the upload limit (SVC_UPLOAD_MAX_MB): refused here, nothing was sent. */
  | 'too_large';

export class PortalError extends Error {
  readonly kind: PortalErrorKind;
  /** HTTP status, for `http` and `invalid_answer`. */
  readonly status: number | null;
  /** The portal's `error` message, for `http` when the body carried one. */
  readonly portalError: string | null;
  /** The error body's other fields (e.g. `conflict`, `target`), as sent: print them with printable(). */
  readonly details: Readonly<Record<string, unknown>> | null;
  /** Messages carry the portal's own words: made printable here, so no caller shows or logs a control character. */
  constructor(
    kind: PortalErrorKind,
    message: string,
    extra: { status?: number; portalError?: string | null; details?: Readonly<Record<string, unknown>> | null } = {},
  ) {
    super(printable(message, { multiline: false }));
    this.name = 'PortalError';
    this.kind = kind;
    this.status = extra.status ?? null;
    this.portalError = extra.portalError == null ? null : printable(extra.portalError, { multiline: false });
    this.details = extra.details ?? null;
  }
}

/** Kinds that are the caller's configuration, not the portal's answer. */
export function isSetupError(err: PortalError): boolean {
  return err.kind === 'credentials' || err.kind === 'config';
}
