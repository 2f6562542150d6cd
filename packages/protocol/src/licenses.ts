import { Type, type Static } from '@sinclair/typebox';
import { ClientId, IsoDateTime } from './common.ts';
import { TIERS } from './permissions.ts';

const TierSchema = Type.Union(TIERS.map((t) => Type.Literal(t)));
/**
 * A per-key limit: a positive integer, or null for unlimited. Written as one `type` array
 * rather than `anyOf [integer, null]`: the portal's ajv coerces types, and inside an anyOf
 * its null branch would coerce 0 or false to null, turning a rejected 0 into "unlimited".
 */
export const LIMIT_MAX = 1_000_000_000;
const Limit = Type.Unsafe<number | null>({ type: ['integer', 'null'], minimum: 1, maximum: LIMIT_MAX });
/** Same reason: in an anyOf, null would be coerced to "" by the string branch. */
const NullableDescription = Type.Unsafe<string | null>({ type: ['string', 'null'], maxLength: 2000 });
/** Same reason: "" must fail the date-time format, not be coerced to null (never expires). */
const OptionalExpiry = Type.Unsafe<string | null>({
  type: ['string', 'null'],
  format: 'date-time',
  description: 'ISO 8601 timestamp, or null for no expiry',
});

export const VALIDATION_REASONS = ['ok', 'revoked', 'expired', 'inactive', 'not_found', 'invalid_format'] as const;
export type ValidationReason = (typeof VALIDATION_REASONS)[number];

/** GET /api/license: the validation result (docs/api.md#credentials). */
export const LicenseValidation = Type.Object({
  valid: Type.Boolean(),
  tier: Type.Union([TierSchema, Type.Null()]),
  client_id: Type.Union([Type.String(), Type.Null()]),
  active: Type.Boolean(),
  revoked: Type.Boolean(),
  expires_at: Type.Union([IsoDateTime, Type.Null()]),
  limits: Type.Object({
    max_sessions: Type.Union([Type.Integer(), Type.Null()]),
    max_agents: Type.Union([Type.Integer(), Type.Null()]),
  }),
  reason: Type.Union(VALIDATION_REASONS.map((r) => Type.Literal(r))),
  checked_at: IsoDateTime,
  legacy: Type.Boolean(),
});
export type LicenseValidation = Static<typeof LicenseValidation>;

export const LICENSE_STATUSES = ['active', 'inactive', 'expired', 'revoked'] as const;

/** A license record as the admin API presents it; never the key or its hash. */
export const License = Type.Object({
  id: Type.String({ pattern: '^lic_[0-9a-f]{16}$' }),
  key_prefix: Type.String(),
  tier: TierSchema,
  client_id: Type.String(),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  max_sessions: Type.Union([Type.Integer(), Type.Null()]),
  max_agents: Type.Union([Type.Integer(), Type.Null()]),
  expires_at: Type.Union([IsoDateTime, Type.Null()]),
  is_active: Type.Boolean(),
  revoked_at: Type.Union([IsoDateTime, Type.Null()]),
  status: Type.Union(
    LICENSE_STATUSES.map((s) => Type.Literal(s)),
    { description: 'derived: revoked, expired, inactive or active' },
  ),
  created_by: Type.Union([Type.String(), Type.Null()]),
  created_at: IsoDateTime,
  updated_at: IsoDateTime,
});
export type License = Static<typeof License>;

export const CreateLicenseBody = Type.Object(
  {
    tier: TierSchema,
    client_id: ClientId,
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(NullableDescription),
    max_sessions: Type.Optional(Limit),
    max_agents: Type.Optional(Limit),
    expires_at: Type.Optional(OptionalExpiry),
  },
  { additionalProperties: false },
);
export type CreateLicenseBody = Static<typeof CreateLicenseBody>;

export const CreatedLicenseResponse = Type.Object({
  license: Type.Intersect([
    License,
    Type.Object({ plaintext_key: Type.String({ description: 'shown once, never again' }) }),
  ]),
});
export type CreatedLicenseResponse = Static<typeof CreatedLicenseResponse>;

export const LicenseResponse = Type.Object({ license: License });
export const LicenseListResponse = Type.Object({ licenses: Type.Array(License) });
export const LicenseListQuery = Type.Object(
  {
    client_id: Type.Optional(ClientId),
    status: Type.Optional(Type.Union(LICENSE_STATUSES.map((s) => Type.Literal(s)))),
  },
  { additionalProperties: false },
);

export const LICENSE_ACTIONS = ['revoke', 'deactivate', 'activate'] as const;
export const LicenseIdQuery = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
);
export const UpdateLicenseBody = Type.Object(
  { action: Type.Union(LICENSE_ACTIONS.map((a) => Type.Literal(a))) },
  { additionalProperties: false },
);
export const DeletedLicenseResponse = Type.Object({ ok: Type.Literal(true), id: Type.String() });
