import { FormatRegistry, type TSchema, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { PortalError } from './errors.ts';

/**
 * The protocol's timestamps are `format: 'date-time'`; TypeBox refuses every value of a format
 * it has no checker for, so it is registered here (as license/tier.ts does, whichever loads first).
 */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;
if (!FormatRegistry.Has('date-time'))
  FormatRegistry.Set('date-time', (v) => DATE_TIME.test(v) && !Number.isNaN(Date.parse(v)));

/** The answer as the protocol types it, or an `invalid_answer` error: never a crash further on. */
export function checkedAnswer<S extends TSchema>(schema: S, status: number, text: string, what: string): Static<S> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new PortalError(
      'invalid_answer',
      `${what}: the portal answered HTTP ${status} with a body that is not JSON`,
      { status },
    );
  }
  if (!Value.Check(schema, body)) {
    const first = Value.Errors(schema, body).First();
    const where = first === undefined ? '' : ` (${first.path || '/'}: ${first.message})`;
    throw new PortalError(
      'invalid_answer',
      `${what}: the portal answered HTTP ${status} with an unexpected body${where}`,
      { status },
    );
  }
  return body;
}

/**
 * The portal's `{"error": "..."}` message of a refused call, or the start of whatever it sent;
 * with the body's other fields (error bodies may carry more fields, e.g. a 409's `conflict` and `target`).
 */
export function refusalOf(text: string): {
  portalError: string | null;
  reason: string;
  details: Readonly<Record<string, unknown>> | null;
} {
  try {
    const body = JSON.parse(text) as { error?: unknown };
    if (typeof body?.error === 'string') {
      const { error, ...details } = body as Record<string, unknown>;
      return { portalError: body.error, reason: body.error, details };
    }
  } catch {
    // not JSON: fall through to the raw text
  }
  return { portalError: null, reason: text.slice(0, 200), details: null };
}
