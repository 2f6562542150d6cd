import { type MeResponse, PERMISSIONS, type Permission, type Tier } from '@svc/protocol';
import type { LicenseRow } from '../licenses/present.ts';

/** Who is calling, resolved from the credential (never from the request body). */
export type Principal = LicensePrincipal | LegacyPrincipal | UserPrincipal;

export interface LicensePrincipal {
  kind: 'license';
  tier: Tier;
  clientId: string;
  permissions: ReadonlySet<Permission>;
  license: LicenseRow;
}

/** The deprecated shared key: tier msp, every permission, no client scoping. */
export interface LegacyPrincipal {
  kind: 'legacy';
  tier: 'msp';
  clientId: null;
  permissions: ReadonlySet<Permission>;
}

export interface UserPrincipal {
  kind: 'user';
  /** `sub` of the token; the user id for the portal's own identity provider. */
  subject: string;
  email: string | null;
  admin: boolean;
  /** null: every client (admins). */
  clientIds: string[] | null;
  tier: Tier;
  permissions: ReadonlySet<Permission>;
}

/** The client ids a principal may see; null means all. */
export function scopeOf(p: Principal): string[] | null {
  switch (p.kind) {
    case 'license':
      return [p.clientId];
    case 'legacy':
      return null;
    case 'user':
      return p.clientIds;
  }
}

export function inScope(p: Principal, clientId: string | null): boolean {
  const scope = scopeOf(p);
  return scope === null || (clientId !== null && scope.includes(clientId));
}

/** The name recorded as `actor` in audit events and `created_by` columns. */
export function actorOf(p: Principal): string {
  switch (p.kind) {
    case 'license':
      return `license:${p.license.id}`;
    case 'legacy':
      return 'legacy-key';
    case 'user':
      return p.email ?? p.subject;
  }
}

/** GET /api/me's answer; permissions in the protocol's order. */
export function presentCaller(u: UserPrincipal): MeResponse {
  return {
    admin: u.admin,
    email: u.email,
    client_ids: u.clientIds,
    tier: u.tier,
    permissions: PERMISSIONS.filter((p) => u.permissions.has(p)),
  };
}
