/**
 * What the fleet and administration pages need from the console: portal API calls (the
 * identity token goes in X-Identity-Token) and identity provider calls (bearer). Either
 * rejects with an Error whose message is the portal's own (`{"error": "..."}`).
 */
export interface ConsoleClient {
  api<T>(method: string, path: string, body?: unknown): Promise<T>;
  identity<T>(method: string, path: string, body?: unknown): Promise<T>;
}

/** The message to show for a failed call: the portal's text, never a stack or `[object Object]`. */
export function messageOf(error: unknown): string {
  if (error instanceof Error && error.message !== '') return error.message;
  if (typeof error === 'string' && error !== '') return error;
  return 'Something went wrong';
}
