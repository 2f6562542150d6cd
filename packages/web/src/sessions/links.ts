/**
 * The session view's address: the `/collect/?session=<id>` with the client it is stored
 * under, always: a session id may exist under several clients, and without the client
 * the view asks which one. null is the namespace of sessions uploaded without a client
 * (`client_id=`). Every link to a session the console builds comes from here.
 */
export function sessionHref(sessionId: string, clientId: string | null): string {
  return `/collect/?${new URLSearchParams({ session: sessionId, client_id: clientId ?? '' }).toString()}`;
}
