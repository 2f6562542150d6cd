import { HttpError, type RequestSpec, send } from '../kit/http/request.ts';

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
  let status: number;
  try {
    const spec: RequestSpec = { method: 'POST', url, headers: {}, body: { kind: 'json', text: JSON.stringify(body) } };
    // send's timeout covers the body too, so a receiver that stalls after the headers cannot hold the run.
    status = (await send(spec, timeoutMs)).status;
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    if (err.kind === 'timeout') throw new ChannelError(`no answer within ${timeoutMs / 1000} s`);
    throw new ChannelError(`request failed (${err.reason})`);
  }
  if (status < 200 || status > 299) throw new ChannelError(`answered HTTP ${status}`);
}
