import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { hasNoBody } from '../src/http/request-body.ts';
import { LazyRequestLogger, lazyChildLogger } from '../src/http/request-logger.ts';
import { ApiKeyVerifier } from '../src/auth/api-keys.ts';
import { KeyFailureThrottle } from '../src/auth/key-throttle.ts';
import type { IncomingMessage } from 'node:http';

/** A pino logger at `level` whose lines land in `lines`, and a count of the children it made. */
function capture(level: string) {
  const lines: Record<string, unknown>[] = [];
  const out = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n')) if (l !== '') lines.push(JSON.parse(l));
      done();
    },
  });
  const logger = pino({ level }, out);
  let children = 0;
  const child = logger.child.bind(logger);
  logger.child = ((...args: Parameters<typeof child>) => {
    children++;
    return child(...args);
  }) as typeof logger.child;
  return { logger, lines, children: () => children };
}

describe('request loggers built on first use', () => {
  it('a request that logs nothing at the level builds no child logger and writes nothing', () => {
    const { logger, lines, children } = capture('info');
    const log = lazyChildLogger.call(null, logger, { reqId: 'req-1' }, {});
    expect(log).toBeInstanceOf(LazyRequestLogger);
    log.debug({ req: { url: '/api/license' } }, 'request received');
    log.trace('nothing');
    expect(children()).toBe(0);
    expect(lines).toEqual([]);
    expect(log.level).toBe('info');
  });

  it('the first line at an enabled level is written by a child with the request id, as before', () => {
    const { logger, lines, children } = capture('info');
    const log = lazyChildLogger.call(null, logger, { reqId: 'req-7' }, {});
    log.warn({ route: 'GET /api/license' }, 'legacy shared key used');
    log.info('second');
    expect(children()).toBe(1);
    expect(lines.map((l) => [l['reqId'], l['level'], l['msg'], l['route']])).toEqual([
      ['req-7', 40, 'legacy shared key used', 'GET /api/license'],
      ['req-7', 30, 'second', undefined],
    ]);
  });

  it('a route with its own log level gets a real child at once', () => {
    const { logger, children } = capture('info');
    const log = lazyChildLogger.call(null, logger, { reqId: 'req-2' }, { level: 'debug' });
    expect(log).not.toBeInstanceOf(LazyRequestLogger);
    expect(children()).toBe(1);
    expect(log.level).toBe('debug');
  });
});

describe('requests without a body', () => {
  const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
  it('are told by their headers: no Transfer-Encoding and no Content-Length above 0', () => {
    expect(hasNoBody(req({}))).toBe(true);
    expect(hasNoBody(req({ 'content-length': '0' }))).toBe(true);
    expect(hasNoBody(req({ 'content-length': '12' }))).toBe(false);
    expect(hasNoBody(req({ 'transfer-encoding': 'chunked' }))).toBe(false);
    expect(hasNoBody(req({ 'transfer-encoding': 'chunked', 'content-length': '0' }))).toBe(false);
  });
});

describe('a proven key prefix, renewed at most once a minute', () => {
  const KEY = `svc_biz_${'a'.repeat(64)}`;
  /** 25 failures from the address (5 x the limit of 5) under other prefixes: the address budget is spent. */
  const spend = (t: KeyFailureThrottle, now: number) => {
    for (let i = 0; i < 25; i++) t.recordFailure('198.51.100.9', `svc_pro_${String(i).padStart(6, '0')}x`, now);
  };
  const DAY = 24 * 3_600_000;

  it('stays proven a day after the success that renewed it, never longer', () => {
    const t = new KeyFailureThrottle(5);
    t.recordSuccess('198.51.100.9', KEY, 0);
    // 30 s later: not renewed (within the minute), so proven until day + 0.
    t.recordSuccess('198.51.100.9', KEY, 30_000);
    spend(t, DAY - 1_000);
    expect(() => t.admit('198.51.100.9', KEY, DAY - 1_000)).not.toThrow();
    expect(() => t.admit('198.51.100.9', KEY, DAY + 1_000)).toThrow('Too many failed API key attempts');
  });

  it('a success a minute or more after the last renewal renews it', () => {
    const t = new KeyFailureThrottle(5);
    t.recordSuccess('198.51.100.9', KEY, 0);
    t.recordSuccess('198.51.100.9', KEY, 60_000);
    spend(t, DAY + 1_000);
    expect(() => t.admit('198.51.100.9', KEY, DAY + 1_000)).not.toThrow();
  });
});

describe('a key digest remembered per connection', () => {
  const LEGACY = 'legacy-shared-key-of-at-least-thirty-two-chars';
  it('answers for the key sent now, whatever the connection sent before', () => {
    // The database is never read for these: the legacy key and malformed keys are known from the key alone.
    const verifier = new ApiKeyVerifier(null as never, LEGACY, 5);
    const connection = {};
    const kinds = [LEGACY, 'not-a-key', LEGACY, `${LEGACY}x`, LEGACY].map(
      (key) => verifier.cachedFrom(key, '198.51.100.1', connection)?.kind,
    );
    expect(kinds).toEqual(['legacy', 'invalid_format', 'legacy', 'invalid_format', 'legacy']);
  });
});
