import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createLicense, createScopedUser, uniqueClientId, type LicenseFixture } from '@svc/test-support/factories';
import { http, withKey, withToken, type HttpResult } from '@svc/test-support/http';
import type { TestPortal } from '@svc/test-support/portal';
import { usePortalWithDb } from '@svc/test-support/portal-db';
import { newSessionId, postUpload, sessionDoc, sessionParts } from '@svc/test-support/upload';

/**
 * Share links can be rotated (new token, the old one 404 at once) and
 * revoked (no token opens the session until the next rotation) by an admin or an in-scope
 * user, and both are audited.
 */

const REPORT = '<!doctype html><html><body><h1>Report</h1></body></html>';

describe('share link rotation and revocation', () => {
  let portal: TestPortal;
  let db: pg.Client;
  let admin: string;
  let keyA: LicenseFixture;
  const A = uniqueClientId('alpha');
  const B = uniqueClientId('beta');

  async function upload(key: string, id = newSessionId()): Promise<{ id: string; token: string }> {
    const res = await postUpload(
      portal.url,
      key,
      sessionParts(sessionDoc('session-complete.json', id), { report: REPORT }),
    );
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
    return { id, token: res.body.share_token as string };
  }
  /** What each way of using a share token answers: /api/share, the share page and its frame, download?token=. */
  async function useToken(id: string, token: string): Promise<number[]> {
    const results: HttpResult[] = [
      await http(portal.url, 'GET', `/api/share?token=${token}`),
      await http(portal.url, 'GET', `/share/?token=${token}`),
      await http(portal.url, 'GET', `/share/frame?token=${token}`),
      await http(portal.url, 'GET', `/api/download?session=${id}&file=report.html&token=${token}`),
    ];
    return results.map((r) => r.status);
  }
  const rotate = (id: string, headers: Record<string, string>, client = '') =>
    http(portal.url, 'POST', `/api/sessions/share?session=${id}${client ? `&client_id=${client}` : ''}`, { headers });
  const revoke = (id: string, headers: Record<string, string>, client = '') =>
    http(portal.url, 'DELETE', `/api/sessions/share?session=${id}${client ? `&client_id=${client}` : ''}`, { headers });
  const audit = async (id: string) =>
    (
      await db.query(
        "SELECT event_type, actor, client_id, data FROM audit_events WHERE session_id = $1 AND event_type LIKE 'share_%' ORDER BY id",
        [id],
      )
    ).rows;

  usePortalWithDb(async (p) => {
    ({ portal, db } = p);
    admin = await portal.adminToken();
    keyA = await createLicense(portal, { tier: 'business', client_id: A });
  });

  it('rotate: a new token works everywhere, the old one is a 404 everywhere at once; audited without the token', async () => {
    const s = await upload(keyA.key);
    expect(await useToken(s.id, s.token)).toEqual([200, 200, 200, 200]);
    const res = await rotate(s.id, withToken(admin));
    expect(res.status, res.text).toBe(200);
    const fresh = res.body.share_token as string;
    expect(res.body).toEqual({
      success: true,
      session_id: s.id,
      client_id: A,
      share_token: fresh,
      share_url: `http://portal.test/share/?token=${fresh}`,
    });
    expect(fresh).toMatch(/^[0-9a-f]{64}$/);
    expect(fresh).not.toBe(s.token);
    expect(await useToken(s.id, s.token)).toEqual([404, 404, 404, 404]);
    expect(await useToken(s.id, fresh)).toEqual([200, 200, 200, 200]);
    // The session's views show the new link; a re-upload keeps it.
    const detail = await http(portal.url, 'GET', `/api/sessions?session=${s.id}`, { headers: withToken(admin) });
    expect(detail.body.session.share_url).toBe(`http://portal.test/share/?token=${fresh}`);
    const again = await postUpload(portal.url, keyA.key, sessionParts(sessionDoc('session-complete.json', s.id)));
    expect(again.body.share_token).toBe(fresh);

    const rows = await audit(s.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      event_type: 'share_rotated',
      client_id: A,
      data: { session_id: s.id, client_id: A, had_link: true },
    });
    expect(JSON.stringify(rows)).not.toContain(fresh);
    expect(JSON.stringify(rows)).not.toContain(s.token);
    // The audit API lists the new type.
    const listed = await http(portal.url, 'GET', `/api/audit?type=share_rotated&session=${s.id}`, {
      headers: withToken(admin),
    });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.events.map((e: { event_type: string }) => e.event_type)).toEqual(['share_rotated']);
  });

  it('revoke: no token opens the session; the listing shows no link; a later rotation issues a new one', async () => {
    const s = await upload(keyA.key);
    const user = await createScopedUser(portal, [A]);
    const res = await revoke(s.id, withToken(user.token));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true, session_id: s.id, client_id: A, revoked: true });
    expect(await useToken(s.id, s.token)).toEqual([404, 404, 404, 404]);
    expect(
      (await db.query('SELECT count(*)::int AS n FROM share_tokens WHERE session_id = $1', [s.id])).rows[0].n,
    ).toBe(0);
    const detail = await http(portal.url, 'GET', `/api/sessions?session=${s.id}`, { headers: withToken(user.token) });
    expect(detail.body.session.share_url).toBeNull();
    const listing = await http(portal.url, 'GET', `/api/sessions?client_id=${A}&limit=200`, {
      headers: withToken(user.token),
    });
    expect(listing.body.sessions.find((x: { session_id: string }) => x.session_id === s.id).share_url).toBeNull();
    // The owner's key still reads the session.
    expect(
      (await http(portal.url, 'GET', `/api/download?session=${s.id}`, { headers: withKey(keyA.key) })).status,
    ).toBe(200);

    // Revoking again changes nothing and is not audited twice.
    expect((await revoke(s.id, withToken(user.token))).body).toEqual({
      success: true,
      session_id: s.id,
      client_id: A,
      revoked: false,
    });

    const rotated = await rotate(s.id, withToken(user.token));
    expect(rotated.status).toBe(200);
    expect(await useToken(s.id, rotated.body.share_token)).toEqual([200, 200, 200, 200]);
    expect(await useToken(s.id, s.token)).toEqual([404, 404, 404, 404]);
    const rows = await audit(s.id);
    expect(rows.map((r) => [r.event_type, r.actor, r.client_id])).toEqual([
      ['share_revoked', user.email, A],
      ['share_rotated', user.email, A],
    ]);
    expect(rows[1].data.had_link).toBe(false);
  });

  it('a re-upload of a session whose link was revoked keeps it revoked, until a rotation makes a new one', async () => {
    const s = await upload(keyA.key);
    expect((await revoke(s.id, withToken(admin))).status).toBe(200);
    const again = await postUpload(
      portal.url,
      keyA.key,
      sessionParts(sessionDoc('session-complete.json', s.id), { report: REPORT }),
    );
    expect(again.status).toBe(200);
    expect(again.body).toEqual({
      success: true,
      session_id: s.id,
      share_token: null,
      share_url: null,
      message: 'Session replaced; its share link stays revoked until an admin or member makes a new one',
      findings: expect.any(Object),
    });
    expect(await useToken(s.id, s.token)).toEqual([404, 404, 404, 404]);
    expect(
      (await db.query('SELECT count(*)::int AS n FROM share_tokens WHERE session_id = $1', [s.id])).rows[0].n,
    ).toBe(0);
    const view = await http(portal.url, 'GET', `/api/sessions?session=${s.id}`, { headers: withToken(admin) });
    expect(view.body.session.share_url).toBeNull();
    // scan_completed carries no link either.
    const event = await db.query(
      "SELECT data FROM audit_events WHERE event_type = 'scan_completed' AND session_id = $1 ORDER BY id DESC LIMIT 1",
      [s.id],
    );
    expect(event.rows[0].data.share_url).toBeNull();
    const rotated = await rotate(s.id, withToken(admin));
    expect(rotated.status).toBe(200);
    expect(await useToken(s.id, rotated.body.share_token)).toEqual([200, 200, 200, 200]);
    // And a re-upload now keeps that new link.
    const third = await postUpload(portal.url, keyA.key, sessionParts(sessionDoc('session-complete.json', s.id)));
    expect(third.body.share_token).toBe(rotated.body.share_token);
  });

  it('out of scope: 404 as for a missing session; keys and no credential: 401; nothing changes', async () => {
    const s = await upload(keyA.key);
    const userB = await createScopedUser(portal, [B]);
    const missing = newSessionId();
    for (const op of [rotate, revoke]) {
      const other = await op(s.id, withToken(userB.token));
      expect([other.status, other.body]).toEqual([404, { error: 'Session not found' }]);
      expect([other.status, other.body]).toEqual([
        (await op(missing, withToken(admin))).status,
        { error: 'Session not found' },
      ]);
      expect((await op(s.id, withToken(userB.token), A)).status).toBe(404);
      expect((await op(s.id, withKey(keyA.key))).status).toBe(401);
      expect((await op(s.id, {})).status).toBe(401);
      expect((await op('../x', withToken(admin))).status).toBe(400);
    }
    expect(await useToken(s.id, s.token)).toEqual([200, 200, 200, 200]);
    expect(await audit(s.id)).toEqual([]);
  });

  it('concurrent rotations, revocations and a delete never fail with a 500 and leave at most one working token', async () => {
    for (let round = 0; round < 5; round++) {
      const s = await upload(keyA.key);
      const h = withToken(admin);
      const answers = await Promise.all([rotate(s.id, h), rotate(s.id, h), revoke(s.id, h), rotate(s.id, h)]);
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      const stored = (
        await db.query('SELECT token, token_hash, token_sealed FROM share_tokens WHERE session_id = $1', [s.id])
      ).rows.map((r) => portal.ctx.shareTokens.open(r));
      expect(stored.length).toBeLessThanOrEqual(1);
      for (const r of [answers[0]!, answers[1]!, answers[3]!]) {
        const token = r.body.share_token as string;
        expect(await useToken(s.id, token)).toEqual(
          stored.includes(token) ? [200, 200, 200, 200] : [404, 404, 404, 404],
        );
      }
      // Serialised on the session row: the audit trail replays to what is stored (the last
      // change is a revocation exactly when no token is left).
      const trail = (await audit(s.id)).map((r) => r.event_type as string);
      expect(trail.filter((t) => t === 'share_rotated')).toHaveLength(3);
      expect(trail.at(-1) === 'share_revoked').toBe(stored.length === 0);
      // A delete racing rotations: each answer is 200 or 404, the session and its tokens are gone.
      const racing = await Promise.all([
        rotate(s.id, h),
        http(portal.url, 'DELETE', `/api/sessions?session=${s.id}`, { headers: h }),
        rotate(s.id, h),
      ]);
      for (const r of racing) expect([200, 404], r.text).toContain(r.status);
      expect(racing[1]!.status).toBe(200);
      expect(
        (await db.query('SELECT count(*)::int AS n FROM share_tokens WHERE session_id = $1', [s.id])).rows[0].n,
      ).toBe(0);
    }
  });

  it('an id under several clients: 409 for the admin, then only the named client’s link changes', async () => {
    const keyB = await createLicense(portal, { tier: 'business', client_id: B });
    const id = newSessionId();
    const a = await upload(keyA.key, id);
    const b = await upload(keyB.key, id);
    const ambiguous = await rotate(id, withToken(admin));
    expect([ambiguous.status, ambiguous.body]).toEqual([
      409,
      {
        error: 'Session id is ambiguous: it exists under several clients; name one with client_id',
        client_ids: [A, B].sort(),
      },
    ]);
    expect((await revoke(id, withToken(admin))).status).toBe(409);
    expect((await revoke(id, withToken(admin), B)).body.revoked).toBe(true);
    expect(await useToken(id, b.token)).toEqual([404, 404, 404, 404]);
    expect(await useToken(id, a.token)).toEqual([200, 200, 200, 200]);
  });
});
