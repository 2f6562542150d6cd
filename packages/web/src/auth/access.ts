import { type ConsoleCaller, type MeResponse, mayOpen } from '@svc/protocol';
import { apiRequest } from '../api/client.ts';
import type { Section } from '../sections.ts';
import { useLoad } from '../ui/use-load.ts';
import type { Identity } from './token.ts';

/**
 * What the signed-in user may open, from the portal's own answer (GET /api/me): a scoped
 * user's permissions follow its clients' license tier, which the token does not carry.
 */

/** Until the portal answers (or if it cannot): an admin keeps every section, a scoped user the sessions. */
export function fallbackCaller(who: Identity): ConsoleCaller {
  return who.role === 'admin' ? { admin: true, permissions: [] } : { admin: false, permissions: ['sessions:read'] };
}

/** The sections `caller` may open, in their order. */
export function sectionsFor(sections: readonly Section[], caller: ConsoleCaller): Section[] {
  return sections.filter((s) => mayOpen(s.path, caller));
}

export type CallerState = { known: true; caller: ConsoleCaller } | { known: false; caller: ConsoleCaller };

/** The caller's permissions, asked again whenever the signed-in identity changes. */
export function useCaller(who: Identity): CallerState {
  const me = useLoad(() => apiRequest<MeResponse>('GET', '/api/me'), [who.subject, who.role, who.clientIds.join()]);
  if (me.state === 'done') return { known: true, caller: me.value };
  // A failed answer is as good as it gets: fall back rather than wait for ever.
  return { known: me.state === 'failed', caller: fallbackCaller(who) };
}
