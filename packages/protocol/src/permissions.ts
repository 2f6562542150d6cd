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

/** Default limits per tier (docs/api.md#limits); null means unlimited. */
export const TIER_DEFAULT_LIMITS: Record<Tier, { max_sessions: number | null; max_agents: number | null }> = {
  professional: { max_sessions: 50, max_agents: 5 },
  business: { max_sessions: 500, max_agents: 25 },
  msp: { max_sessions: null, max_agents: null },
};
