import fastJsonStringify from 'fast-json-stringify';
import type { FastifySerializerCompiler } from 'fastify';

/**
 * Fastify's own response serializer (fast-json-stringify with no shared schemas, as its
 * default compiler calls it), kept per schema object for the whole process: a second app in
 * the process builds none again (see http/validation.ts).
 */
const serializers = new WeakMap<object, (data: unknown) => string>();

export const serializerCompiler: FastifySerializerCompiler<unknown> = ({ schema }) => {
  const key = schema as object;
  let serialize = serializers.get(key);
  if (serialize === undefined) {
    serialize = fastJsonStringify(key as Parameters<typeof fastJsonStringify>[0]);
    serializers.set(key, serialize);
  }
  return serialize;
};
