import type { TSchema } from '@sinclair/typebox';
import { ErrorBody } from '@svc/protocol';

/** A route's response schemas: its success bodies plus the error body for each listed status. */
export function responses<T extends Record<number, TSchema>>(
  ok: T,
  ...errorCodes: number[]
): T & Record<number, TSchema> {
  return { ...ok, ...Object.fromEntries(errorCodes.map((code) => [code, ErrorBody])) };
}
