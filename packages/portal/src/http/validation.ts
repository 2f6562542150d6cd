import { Ajv, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { lazily } from './compile-lazily.ts';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

const base: Options = { removeAdditional: false, useDefaults: true, allErrors: false, strict: false };

function build(options: Options): Ajv {
  return addFormats(new Ajv({ ...base, ...options }));
}

/**
 * One pair per process, not per app: Ajv keeps what it compiled by schema object, and the
 * routes' schemas are module constants, so a second app in the process (a replica started in
 * process, every test portal of a test worker) compiles nothing again; and each schema is compiled
 * on its first use (http/compile-lazily.ts).
 */
const coercing = build({ coerceTypes: 'array' });
const strict = build({ coerceTypes: false });

/**
 * Query strings and headers arrive as text, so their schemas coerce ("5" → 5). Bodies are
 * JSON and keep their types: coercion there would turn `0`, `false` or `""` into `null`
 * inside an "integer or null" field, and store a limit of 0 as "unlimited".
 */
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? strict : coercing;
  const compiled = lazily(() => ajv.compile(schema as object));
  // Fastify reads a failed validation's errors from the function it was given.
  const validate = ((data: unknown) => {
    const check = compiled.get();
    const ok = check(data);
    validate.errors = check.errors ?? null;
    return ok;
  }) as ValidateFunction;
  return validate as ReturnType<FastifySchemaCompiler<unknown>>;
};
