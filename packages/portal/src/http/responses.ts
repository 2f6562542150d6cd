import type { Readable } from 'node:stream';
import { type TSchema, Type } from '@sinclair/typebox';
import { ErrorBody } from '@svc/protocol';

/** A route's response schemas: its success bodies plus the error body for each listed status. */
export function responses<T extends Record<number, TSchema>>(
  ok: T,
  ...errorCodes: number[]
): T & Record<number, TSchema> {
  return { ...ok, ...Object.fromEntries(errorCodes.map((code) => [code, ErrorBody])) };
}

/** A streamed body: described as a string in OpenAPI, typed as the stream the handler sends. */
export const fileContent = (description: string, json = false) => ({
  schema: Type.Unsafe<Readable>(
    json ? Type.Object({}, { additionalProperties: true, description }) : Type.String({ description }),
  ),
});
