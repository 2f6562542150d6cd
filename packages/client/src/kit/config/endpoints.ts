/**
 * Portal endpoint URLs derived from the upload URL (the client derives the health,
 * license and agent-command URLs from CONSULTATION_API_URL by replacing the trailing
 * `/upload`).
 */
export type PortalEndpoint =
  | 'upload'
  | 'health'
  | 'license'
  | 'agent-commands'
  | 'download'
  | 'share'
  | 'refresh'
  | 'benchmark'
  | 'sessions'
  | 'sessions/latest-state'
  | 'vuln-index';

export class EndpointError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EndpointError';
  }
}

export function deriveEndpoint(uploadUrl: string, endpoint: PortalEndpoint): string {
  let url: URL;
  try {
    url = new URL(uploadUrl.trim());
  } catch {
    throw new EndpointError(`CONSULTATION_API_URL is not a URL: ${uploadUrl}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new EndpointError('CONSULTATION_API_URL must use http or https');
  const path = url.pathname.replace(/\/+$/, '');
  if (!path.endsWith('/upload')) throw new EndpointError('CONSULTATION_API_URL must end with /upload');
  url.pathname = `${path.slice(0, -'/upload'.length)}/${endpoint}`;
  url.search = '';
  url.hash = '';
  return url.toString();
}
