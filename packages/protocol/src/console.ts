import { Type, type Static } from '@sinclair/typebox';
import { PERMISSIONS, type Permission, TIERS } from './permissions.ts';

/**
 * Which console sections a signed-in user may open: the permission each section's own calls
 * need at the portal (the portal's guards refuse them otherwise), or admin only. The console
 * shows and routes by it; the portal's tests check it against the guards.
 */
export type ConsoleAccess = { readonly adminOnly: true } | { readonly permission: Permission };

export const CONSOLE_ACCESS = {
  '/console/overview': { permission: 'sessions:read' },
  '/console/sessions': { permission: 'sessions:read' },
  '/console/findings': { permission: 'sessions:read' },
  '/console/changes': { permission: 'sessions:read' },
  '/console/fleet': { permission: 'health:agents' },
  '/console/commands': { permission: 'agent:commands' },
  '/console/schedules': { adminOnly: true },
  '/console/licenses': { adminOnly: true },
  '/console/users': { adminOnly: true },
  '/console/webhooks': { permission: 'webhooks' },
  '/console/audit': { permission: 'audit' },
  '/console/health': { permission: 'db:health' },
} as const satisfies Record<string, ConsoleAccess>;
export type ConsolePath = keyof typeof CONSOLE_ACCESS;

/** What the rule needs to know of a caller. */
export interface ConsoleCaller {
  admin: boolean;
  permissions: readonly Permission[];
}

export function mayOpen(path: ConsolePath, caller: ConsoleCaller): boolean {
  const access: ConsoleAccess = CONSOLE_ACCESS[path];
  if (caller.admin) return true;
  return 'permission' in access && caller.permissions.includes(access.permission);
}

/** GET /api/me: the signed-in user as the portal resolves it (role, scope and the tier's permissions). */
export const MeResponse = Type.Object({
  admin: Type.Boolean(),
  email: Type.Union([Type.String(), Type.Null()]),
  client_ids: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'null: every client (admins)' }),
  tier: Type.Union(
    TIERS.map((t) => Type.Literal(t)),
    {
      description: "The highest tier among the active keys of the user's clients (msp for admins)",
    },
  ),
  permissions: Type.Array(Type.Union(PERMISSIONS.map((p) => Type.Literal(p)))),
});
export type MeResponse = Static<typeof MeResponse>;
