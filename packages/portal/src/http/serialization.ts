import fastJsonStringify from 'fast-json-stringify';
import type { FastifySerializerCompiler } from 'fastify';
import { lazily } from './compile-lazily.ts';

type Serialize = (data: unknown) => string;

/**
 * Fastify's own response serializer (fast-json-stringify with no shared schemas, as its
 * default compiler calls it), built on its first use (http/compile-lazily.ts) and kept for the
 * whole process: a second app in the process builds none again (see http/validation.ts). Kept by
 * schema object, and by the schema's JSON for the few routes that build their schema when they
 * register (a file download's), which were a dozen builds of every test portal's start.
 */
const byObject = new WeakMap<object, Serialize>();
const byJson = new Map<string, Serialize>();

export const serializerCompiler: FastifySerializerCompiler<unknown> = ({ schema }) => {
  const key = schema as object;
  let serialize = byObject.get(key);
  if (serialize !== undefined) return serialize;
  const json = JSON.stringify(key);
  serialize = byJson.get(json);
  if (serialize === undefined) {
    const built = lazily(() => buildSerializer(key));
    serialize = (data: unknown) => built.get()(data);
    byJson.set(json, serialize);
  }
  byObject.set(key, serialize);
  return serialize;
};

/** The serializer itself, built now: what the compiler above builds on a schema's first use. */
export function buildSerializer(schema: object): Serialize {
  return fastJsonStringify(withPlainUnions(schema) as Parameters<typeof fastJsonStringify>[0]);
}

type Schema = { [keyword: string]: unknown };

const isSchema = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keywords whose value is a schema, a list of schemas, or a map of name to schema. */
const ONE = ['additionalProperties', 'items', 'not', 'if', 'then', 'else', 'contains'];
const LIST = ['anyOf', 'oneOf', 'allOf', 'prefixItems', 'items'];
const MAP = ['properties', 'patternProperties', '$defs', 'definitions'];

/**
 * A copy of a response schema in which the unions the protocol writes most (a union of
 * constants, and "X or null") are an `enum` and `nullable`. fast-json-stringify writes an
 * `anyOf` by running an Ajv validator of each branch on the value, compiled on the response's
 * first use: that was seconds of every test worker's start and a validator call per such field
 * in every answer (a license check's `tier` and `reason`). The answers are the same: the value
 * is written as it is, and only the portal's own data is written through them.
 */
export function withPlainUnions(schema: unknown): unknown {
  if (!isSchema(schema)) return schema;
  // String keys only: TypeBox's symbols would call an enum a "Union".
  const out: Schema = Object.fromEntries(Object.entries(schema));
  for (const k of ONE) if (isSchema(out[k])) out[k] = withPlainUnions(out[k]);
  for (const k of LIST) if (Array.isArray(out[k])) out[k] = (out[k] as unknown[]).map(withPlainUnions);
  for (const k of MAP) {
    const map = out[k];
    if (isSchema(map)) out[k] = Object.fromEntries(Object.entries(map).map(([n, s]) => [n, withPlainUnions(s)]));
  }
  const { anyOf, ...siblings } = out;
  const plain = Array.isArray(anyOf) && anyOf.every(isSchema) ? plainUnion(anyOf) : null;
  return plain === null ? out : { ...siblings, ...plain };
}

const COMBINATORS = ['anyOf', 'oneOf', 'allOf', '$ref', 'if', 'const'];

/** The union as one schema without `anyOf`, or null when it is not one of the two plain shapes. */
function plainUnion(options: Schema[]): Schema | null {
  const constants = options.map((o) => o['const']);
  const types = new Set(constants.map((c) => typeof c));
  if (constants.every((c) => c !== undefined) && types.size === 1) {
    const type = [...types][0];
    if (type === 'string' || type === 'number' || type === 'boolean') return { type, enum: constants };
  }
  const isNull = (o: Schema) => o['type'] === 'null' && !COMBINATORS.some((k) => k in o);
  const rest = options.filter((o) => !isNull(o));
  const other = rest[0];
  if (options.length !== 2 || rest.length !== 1 || other === undefined) return null;
  if (typeof other['type'] !== 'string' || COMBINATORS.some((k) => k in other)) return null;
  return { ...other, nullable: true };
}
