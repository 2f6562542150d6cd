import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { HeartbeatResponse, LicenseValidation } from '@svc/protocol';
import { buildSerializer, serializerCompiler, withPlainUnions } from './serialization.ts';

const serializerOf = (schema: object) =>
  serializerCompiler({ schema, method: 'GET', url: '/', httpStatus: '200' }) as (data: unknown) => string;

describe('response schemas without Ajv at run time', () => {
  it('writes a union of constants as an enum and "X or null" as nullable, siblings kept', () => {
    const literals = Type.Union([Type.Literal('a'), Type.Literal('b')], { description: 'one of two' });
    expect(withPlainUnions(literals)).toEqual({ description: 'one of two', type: 'string', enum: ['a', 'b'] });
    expect(withPlainUnions(Type.Union([Type.Literal(1), Type.Literal(2)]))).toEqual({ type: 'number', enum: [1, 2] });
    expect(withPlainUnions(Type.Union([Type.Null(), Type.String({ format: 'date-time' })]))).toMatchObject({
      type: 'string',
      format: 'date-time',
      nullable: true,
    });
    // Nested: the constants first, then the null beside them.
    const nested = withPlainUnions(Type.Object({ t: Type.Union([literals, Type.Null()]) })) as {
      properties: { t: unknown };
    };
    expect(nested.properties.t).toMatchObject({ type: 'string', enum: ['a', 'b'], nullable: true });
  });

  it('leaves the unions that need a validator to choose: objects, mixed constants, three branches', () => {
    const objects = Type.Union([Type.Object({ a: Type.String() }), Type.Object({ b: Type.String() })]);
    const mixed = Type.Union([Type.Literal('a'), Type.Literal(1)]);
    const three = Type.Union([Type.String(), Type.Integer(), Type.Null()]);
    const objectOrNull = Type.Union([objects, Type.Null()]);
    for (const s of [objects, mixed, three, objectOrNull]) expect(withPlainUnions(s)).toHaveProperty('anyOf');
  });

  it('answers a license check and a heartbeat as JSON.stringify would, with no validator in the serializer', () => {
    const license = serializerOf(LicenseValidation);
    const checks = [
      {
        valid: true,
        tier: 'msp',
        client_id: 'acme',
        active: true,
        revoked: false,
        expires_at: new Date('2027-01-02T03:04:05.678Z'),
        limits: { max_sessions: 10, max_agents: null },
        reason: 'ok',
        checked_at: '2026-11-30T00:00:00.000Z',
        legacy: false,
      },
      {
        valid: false,
        tier: null,
        client_id: null,
        active: false,
        revoked: false,
        expires_at: null,
        limits: { max_sessions: null, max_agents: 0 },
        reason: 'not_found',
        checked_at: '2026-11-30T00:00:00.000Z',
        legacy: false,
      },
    ];
    for (const c of checks) expect(license(c)).toBe(JSON.stringify(c));
    expect(buildSerializer(LicenseValidation).toString()).not.toContain('getSchemaValidator');
    expect(buildSerializer(HeartbeatResponse).toString()).not.toContain('getSchemaValidator');
  });

  it('builds one serializer per schema, also when a route builds an equal schema object again', () => {
    const download = () => Type.Object({ name: Type.String(), size: Type.Integer() }, { description: 'per app' });
    const first = serializerOf(download());
    expect(serializerOf(download())).toBe(first);
    expect(serializerOf(Type.Object({ name: Type.String() }))).not.toBe(first);
    expect(first({ name: 'a', size: 2 })).toBe('{"name":"a","size":2}');
  });
});
