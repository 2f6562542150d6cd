import type { IncomingMessage } from 'node:http';

/**
 * A request that has no body at all (RFC 9112 section 6.3: neither Transfer-Encoding nor a
 * Content-Length above 0), such as a GET. Node marks it complete only after its `request`
 * event, so `req.complete` cannot tell yet; the headers can. Nothing of it is left to arrive:
 * no body timeout to arm, no body to wait for.
 */
export function hasNoBody(req: IncomingMessage): boolean {
  const { headers } = req;
  if (headers['transfer-encoding'] !== undefined) return false;
  const length = headers['content-length'];
  return length === undefined || length === '0';
}
