import { describe, expect, it } from 'vitest';
import { coarseError, presentForCaller } from './present.ts';

describe('coarseError (what a non-admin is told of a failed attempt)', () => {
  it.each([
    [null, null],
    ['HTTP 503', 'HTTP 503'],
    ['HTTP 404', 'HTTP 404'],
    ['timeout after 5 s', 'timeout'],
    ['not sent: 64 deliveries to this receiver are in flight; waited 20.0 s for a turn', 'not sent'],
    ['not sent: 1 delivery to this receiver is in flight and its queue is full', 'not sent'],
    [
      "ERR_TLS_CERT_ALTNAME_INVALID: Hostname/IP does not match certificate's altnames: Host: wrong.test. is not in the cert's altnames: DNS:receiver.test",
      'TLS error',
    ],
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE: unable to verify the first certificate', 'TLS error'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate', 'TLS error'],
    ['SELF_SIGNED_CERT_IN_CHAIN: self-signed certificate in certificate chain', 'TLS error'],
    ['CERT_HAS_EXPIRED: certificate has expired', 'TLS error'],
    ['ERR_SSL_WRONG_VERSION_NUMBER: wrong version number', 'TLS error'],
    ['EPROTO: write EPROTO SSL routines:ssl3_read_bytes:tlsv1 alert internal error', 'TLS error'],
    ['url is not allowed: 10.0.0.1 is not a public address (private)', 'connection failed'],
    ['url host internal.example does not resolve', 'connection failed'],
    ['ECONNREFUSED: connect ECONNREFUSED 10.1.2.3:443', 'connection failed'],
    ['UND_ERR_SOCKET: other side closed', 'connection failed'],
    ['ECONNRESET: read ECONNRESET', 'connection failed'],
    ['EHOSTUNREACH: connect EHOSTUNREACH 192.168.7.7:8443', 'connection failed'],
    [
      'abandoned: 3 runs ended without an outcome (the replica sending it stopped first)',
      'abandoned: 3 runs ended without an outcome (the replica sending it stopped first)',
    ],
    ['abandoned: the subscription is disabled', 'abandoned: the subscription is disabled'],
  ])('%s -> %s', (detailed, coarse) => {
    expect(coarseError(detailed)).toBe(coarse);
  });

  it("presentForCaller leaves an admin's view alone and makes every attempt coarse and untimed for anyone else", () => {
    const delivery = {
      id: 1,
      subscription_id: 'whsub_000000000001',
      event_id: 'evt_0000000000000001',
      event_type: 'ping',
      status: 'failed' as const,
      redelivery_of: null,
      created_at: '2026-11-23T00:00:00.000Z',
      runs: 1,
      attempts: [1, 2].map((attempt) => ({
        attempt,
        status_code: null,
        duration_ms: 3,
        error: 'ECONNREFUSED: connect ECONNREFUSED 10.1.2.3:443',
        attempted_at: '2026-11-23T00:00:00.000Z',
      })),
    };
    expect(presentForCaller({ admin: true }, delivery)).toBe(delivery);
    expect(presentForCaller({ admin: false }, delivery)).toEqual({
      ...delivery,
      attempts: delivery.attempts.map((a) => ({ ...a, duration_ms: null, error: 'connection failed' })),
    });
  });
});
