/**
 * A query as callers build it: an optional parameter may be undefined, and the request leaves it
 * out (urlOf in client.ts). Apart from client.ts so pure models can name it without the session.
 */
export type QueryOf<T> = { [K in keyof T]: undefined extends T[K] ? T[K] | undefined : T[K] };
