/**
 * Tiers and the permission matrix (docs/api.md#credentials, docs/api.md#agents-and-commands).
 * Shared by the portal (enforcement) and the client (soft feature gates).
 */
export const TIERS = ['professional', 'business', 'msp'] as const;
export type Tier = (typeof TIERS)[number];

const ALL_TIERS = ['upload', 'download', 'sessions:read', 'update:status'] as const;
const BUSINESS_UP = ['benchmark', 'remediation:update', 'webhooks', 'compliance', 'agent:commands'] as const;
const MSP_ONLY = ['db:health', 'audit', 'health:agents', 'agent:groups'] as const;

export const PERMISSIONS = [...ALL_TIERS, ...BUSINESS_UP, ...MSP_ONLY] as const;
export type Permission = (typeof PERMISSIONS)[number];

const TIER_PERMISSIONS: Record<Tier, ReadonlySet<Permission>> = {
  professional: new Set<Permission>(ALL_TIERS),
  business: new Set<Permission>([...ALL_TIERS, ...BUSINESS_UP]),
  msp: new Set<Permission>(PERMISSIONS),
};

export function permissionsOf(tier: Tier): ReadonlySet<Permission> {
  return TIER_PERMISSIONS[tier];
}

export function tierAllows(tier: Tier, permission: Permission): boolean {
  return TIER_PERMISSIONS[tier].has(permission);
}

/**
 * The client's soft feature gates (docs/cli.md#license-tier), named as the client names them,
 * and the portal permission each one is, so the two vocabularies cannot drift apart: a gate
 * opens at the tier the portal grants its permission. `c2` is the client's alone (no portal
 * route); it opens at business, like the rest of the list.
 */
export const FEATURE_PERMISSIONS = {
  compliance: 'compliance',
  benchmark: 'benchmark',
  remediation: 'remediation:update',
  webhooks: 'webhooks',
  c2: null,
  agent_commands: 'agent:commands',
} as const satisfies Record<string, Permission | null>;
export type GatedFeature = keyof typeof FEATURE_PERMISSIONS;

/** The lowest tier whose keys hold `permission`; business for a gate without a portal permission. */
export function featureTier(feature: GatedFeature): Tier {
  const permission = FEATURE_PERMISSIONS[feature];
  if (permission === null) return 'business';
  return TIERS.find((t) => tierAllows(t, permission)) ?? 'msp';
}

/** Default limits per tier (docs/api.md#limits); null means unlimited. */
export const TIER_DEFAULT_LIMITS: Record<Tier, { max_sessions: number | null; max_agents: number | null }> = {
  professional: { max_sessions: 50, max_agents: 5 },
  business: { max_sessions: 500, max_agents: 25 },
  msp: { max_sessions: null, max_agents: null },
};
