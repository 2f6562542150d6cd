import { type ConsoleCaller, type ConsolePath, mayOpen } from '@svc/protocol';
import type { Identity } from './token.ts';

/** Until the portal answers (or if it cannot): an admin keeps every section, a scoped user the sessions. */
export function fallbackCaller(who: Identity): ConsoleCaller {
  return who.role === 'admin' ? { admin: true, permissions: [] } : { admin: false, permissions: ['sessions:read'] };
}

/** The sections `caller` may open, in their order. */
export function sectionsFor<S extends { path: ConsolePath }>(sections: readonly S[], caller: ConsoleCaller): S[] {
  return sections.filter((s) => mayOpen(s.path, caller));
}
