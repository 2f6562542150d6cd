import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

const base: Options = { removeAdditional: false, useDefaults: true, allErrors: false, strict: false };

function build(options: Options): Ajv {
  return addFormats(new Ajv({ ...base, ...options }));
}

/**
 * Query strings and headers arrive as text, so their schemas coerce ("5" → 5). Bodies are
 * JSON and keep their types: coercion there would turn `0`, `false` or `""` into `null`
 * inside an "integer or null" field, and store a limit of 0 as "unlimited".
 */
export function validatorCompiler(): FastifySchemaCompiler<unknown> {
  const coercing = build({ coerceTypes: 'array' });
  const strict = build({ coerceTypes: false });
  return ({ schema, httpPart }) =>
    (httpPart === 'body' ? strict : coercing).compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
}
