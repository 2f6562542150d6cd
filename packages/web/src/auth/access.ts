import type { ConsoleCaller, Permission } from '@svc/protocol';
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { getMe } from '../api/me.ts';
import { useLoad } from '../ui/use-load.ts';
import { fallbackCaller } from './section-access.ts';
import type { Identity } from './token.ts';

/**
 * What the signed-in user may open, from the portal's own answer (GET /api/me): a scoped
 * user's permissions follow its clients' license tier, which the token does not carry.
 */

export type CallerState = { known: true; caller: ConsoleCaller } | { known: false; caller: ConsoleCaller };

/** The caller's permissions, asked again whenever the signed-in identity changes. */
export function useCaller(who: Identity): CallerState {
  const me = useLoad(getMe, [who.subject, who.role, who.clientIds.join()]);
  if (me.state === 'done') return { known: true, caller: me.value };
  // A failed answer is as good as it gets: fall back rather than wait for ever.
  return { known: me.state === 'failed', caller: fallbackCaller(who) };
}

/** The signed-in caller, for pages that show a control only to those who may use it (app.tsx provides it). */
export const CallerContext = createContext<ConsoleCaller>({ admin: false, permissions: [] });

/** Whether the signed-in caller holds `permission` (admins hold every one). */
export function useMay(permission: Permission): boolean {
  const caller = useContext(CallerContext);
  return caller.admin || caller.permissions.includes(permission);
}
