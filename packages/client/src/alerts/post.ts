/**
 * One JSON POST for an alert channel, bounded by `timeoutMs` from connect to the end of the
 * response. Resolves on a 2xx answer, rejects otherwise with a reason that never contains the
 * URL (a Slack or webhook URL carries its secret in the path). Redirects are not followed.
 */
export class ChannelError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChannelError';
  }
}

export async function postJson(url: string, body: unknown, timeoutMs: number): Promise<void> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    // Read the body within the same bound so a receiver that stalls after the headers cannot hold the run.
    await res.arrayBuffer();
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    if (e.name === 'TimeoutError' || e.name === 'AbortError')
      throw new ChannelError(`no answer within ${timeoutMs / 1000} s`);
    throw new ChannelError(`request failed (${e.cause?.code ?? e.name})`);
  }
  if (res.status < 200 || res.status > 299) throw new ChannelError(`answered HTTP ${res.status}`);
}
