/**
 * The session view's address: `/collect/?session=<id>` with the client the session is stored
 * under, always: a session id may exist under several clients, and without the client the
 * view asks which one. null is the namespace of sessions uploaded without a client
 * (`client_id=`). Every session link the portal returns or the console builds comes from here.
 */
export function sessionHref(sessionId: string, clientId: string | null): string {
  return `/collect/?${new URLSearchParams({ session: sessionId, client_id: clientId ?? '' }).toString()}`;
}
