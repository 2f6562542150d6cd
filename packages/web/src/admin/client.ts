/**
 * What the fleet and administration pages need from the console: portal API calls (the
 * identity token goes in X-Identity-Token) and identity provider calls (bearer). Either
 * rejects with an Error whose message is the portal's own (`{"error": "..."}`).
 */
export interface ConsoleClient {
  api<T>(method: string, path: string, body?: unknown): Promise<T>;
  identity<T>(method: string, path: string, body?: unknown): Promise<T>;
}
