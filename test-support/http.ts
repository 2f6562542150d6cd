export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  headers?: Record<string, string> | undefined;
  json?: unknown;
  form?: Record<string, string>;
  body?: string;
}

/** A real HTTP request; the body is parsed as JSON when it is JSON. */
export async function http<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  opts: RequestOptions = {},
): Promise<HttpResult<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  let body: string | URLSearchParams | undefined = opts.body;
  if (opts.json !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(opts.json);
  } else if (opts.form !== undefined) {
    body = new URLSearchParams(opts.form);
  }
  const res = await fetch(`${baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('json') && text !== '') parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

export const withKey = (key: string) => ({ 'x-api-key': key });
export const withToken = (token: string) => ({ 'x-identity-token': token });
