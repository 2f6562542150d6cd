/** The session view's address: SPEC's `/collect/?session=<id>`, with the client when it is known (D17). */
export function sessionHref(sessionId: string, clientId: string | null): string {
  const q = new URLSearchParams({ session: sessionId });
  if (clientId !== null) q.set('client_id', clientId);
  return `/collect/?${q.toString()}`;
}
