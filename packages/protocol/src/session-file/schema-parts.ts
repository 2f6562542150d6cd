import { Type, type TSchema } from '@sinclair/typebox';

/** Small builders the session-file schema (schema.ts) and its triage fields (triage-fields.ts) share. */

export const opt = <T extends TSchema>(t: T) => Type.Optional(t);
export const nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
export const text = (description: string) => Type.String({ description });
export const timestamp = (description: string) => Type.String({ description: `${description} (ISO 8601)` });
export const literals = (values: readonly string[], description: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    { description },
  );
