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

const SENSITIVE_QUERY = /([?&](?:token|key|api_key|apikey|password|secret|jwt|access_token|refresh_token)=)[^&#]*/gi;

export function maskUrl(url: string): string {
  return url.replace(SENSITIVE_QUERY, '$1[REDACTED]');
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
