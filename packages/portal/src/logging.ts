import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './config/index.ts';

/**
 * Keys, tokens, passwords and secrets never reach the log. Headers are redacted by path;
 * URLs are logged with the values of sensitive query parameters masked, because share
 * tokens and keys can travel in query strings.
 */
export const REDACT_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers["x-identity-token"]',
  'req.headers.authorization',
  'req.headers.cookie',
  '*.password',
  '*.plaintext_key',
  '*.signing_secret',
  '*.access_token',
  '*.refresh_token',
  '*.key',
  '*.token',
];

const SENSITIVE_NAME = /^(?:token|key|api_key|apikey|password|secret|jwt|access_token|refresh_token)$/i;
const QUERY_PARAM = /([?&])([^=&#]*)=([^&#]*)/g;

/** The parameter name as the router sees it: `%74oken` and `to+ken` are decoded before matching. */
function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replaceAll('+', ' ')).trim();
  } catch {
    return name;
  }
}

export function maskUrl(url: string): string {
  const query = url.indexOf('?');
  if (query === -1) return url;
  return (
    url.slice(0, query) +
    url
      .slice(query)
      .replace(QUERY_PARAM, (whole, sep: string, name: string) =>
        SENSITIVE_NAME.test(decodedName(name)) ? `${sep}${name}=[REDACTED]` : whole,
      )
  );
}

export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      serializers: {
        req(req: { method: string; url: string; hostname?: string; ip?: string }) {
          return { method: req.method, url: maskUrl(req.url), host: req.hostname, ip: req.ip };
        },
      },
    },
    destination,
  );
}
