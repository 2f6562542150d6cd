import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticateKey } from '../src/auth/authenticate.ts';
import type { UserPrincipal } from '../src/auth/principal.ts';
import { resolveUser } from '../src/auth/users.ts';
import { DomainError } from '../src/domain/errors.ts';
import { httpErrorOf } from '../src/http/errors.ts';
import { accessSession } from '../src/sessions/access.ts';
import { benchmarkSession } from '../src/sessions/benchmark-session.ts';
import { removeSession } from '../src/sessions/delete.ts';
import { listSessionsFor } from '../src/sessions/listing.ts';
import { fileToServe } from '../src/sessions/open-file.ts';
import { findSession } from '../src/sessions/queries.ts';
import { refreshSessionFile } from '../src/sessions/refresh.ts';
import { rotateShareToken, sharedSession } from '../src/sessions/share.ts';
import { updateSessionStatus } from '../src/sessions/status.ts';
import { createLicense, createScopedUser, uniqueClientId, type LicenseFixture } from '@svc/test-support/factories';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { newSessionId, postUpload, sessionDoc, sessionParts } from '@svc/test-support/upload';

/**
 * The sessions area's refusals, called directly with plain values (no request): each is a
 * DomainError whose code is stable and whose status and body are what the routes answer.
 * Real portal, real PostgreSQL, real blob store.
 */

interface Refusal {
  code: string;
  status: number;
  body: Record<string, unknown>;
}

async function refusal(call: Promise<unknown>): Promise<Refusal> {
  const err = await call.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof DomainError)) throw new Error(`expected a DomainError, got ${String(err)}`);
  const http = httpErrorOf(err);
  return { code: err.code, status: http.statusCode, body: { ...http.extra, error: http.message } };
}

const sessionNotFound = { code: 'not_found.session', status: 404, body: { error: 'Session not found' } };
const silent = { error: () => undefined, warn: () => undefined };

describe('sessions domain refusals', () => {
  let portal: TestPortal;
  let admin: UserPrincipal;
  let scoped: UserPrincipal;
  let keyA: LicenseFixture;
  let keyB: LicenseFixture;
  const A = uniqueClientId('alpha');
  const B = uniqueClientId('beta');

  async function upload(key: string, sessionId: string): Promise<string> {
    const res = await postUpload(portal.url, key, sessionParts(sessionDoc('session-minimal.json', sessionId)));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body as { share_token: string }).share_token;
  }

  beforeAll(async () => {
    portal = await startTestPortal();
    keyA = await createLicense(portal, { client_id: A, tier: 'business' });
    keyB = await createLicense(portal, { client_id: B, tier: 'business' });
    admin = (await resolveUser(portal.ctx, await portal.adminToken())) as UserPrincipal;
    scoped = (await resolveUser(portal.ctx, (await createScopedUser(portal, [A])).token)) as UserPrincipal;
  });
  afterAll(async () => {
    await portal?.close();
  });

  it('no credential and no share token: 401; a share token opens only its own session of its own client', async () => {
    const [mine, other] = [newSessionId(), newSessionId()];
    const token = await upload(keyA.key, mine);
    const otherToken = await upload(keyA.key, other);
    expect(await refusal(accessSession(portal.ctx, null, mine, {}))).toEqual({
      code: 'unauthorized.credential',
      status: 401,
      body: { error: 'Unauthorized' },
    });
    expect((await accessSession(portal.ctx, null, mine, { shareToken: token })).client_id).toBe(A);
    expect(await refusal(accessSession(portal.ctx, null, mine, { shareToken: otherToken }))).toEqual(sessionNotFound);
    expect(await refusal(accessSession(portal.ctx, null, mine, { shareToken: token, clientId: B }))).toEqual(
      sessionNotFound,
    );
  });

  it('an id under several clients in scope is a 409 naming them; a scope with one of them gets that one', async () => {
    const id = newSessionId();
    await upload(keyA.key, id);
    await upload(keyB.key, id);
    expect(await refusal(accessSession(portal.ctx, admin, id, {}))).toEqual({
      code: 'conflict.ambiguous_session',
      status: 409,
      body: {
        client_ids: [A, B].sort(),
        error: 'Session id is ambiguous: it exists under several clients; name one with client_id',
      },
    });
    expect((await accessSession(portal.ctx, admin, id, { clientId: B })).client_id).toBe(B);
    expect((await accessSession(portal.ctx, scoped, id, {})).client_id).toBe(A);
    expect(await refusal(accessSession(portal.ctx, scoped, id, { clientId: B }))).toEqual(sessionNotFound);
  });

  it('an unknown share token and a file the session does not have are 404s of their own', async () => {
    expect(await refusal(sharedSession(portal.ctx, 'ab'.repeat(32)))).toEqual({
      code: 'not_found.share_link',
      status: 404,
      body: { error: 'Share link not found' },
    });
    const id = newSessionId();
    await upload(keyA.key, id);
    const row = (await findSession(portal.ctx.db, { clientId: A, sessionId: id }))!;
    const served = await fileToServe(portal.ctx, row, 'session_results.json');
    served.stream.destroy();
    expect(served.contentType).toBe('application/json');
    expect(await refusal(fileToServe(portal.ctx, row, 'exec_summary.html'))).toEqual({
      code: 'not_found.file',
      status: 404,
      body: { error: 'File not found: exec_summary.html' },
    });
  });

  it('a session gone meanwhile is the 404 of a missing session for delete, rotation and benchmark', async () => {
    const id = newSessionId();
    await upload(keyA.key, id);
    const row = (await findSession(portal.ctx.db, { clientId: A, sessionId: id }))!;
    await removeSession(portal.ctx, row, admin);
    const gone = { clientId: A, sessionId: id };
    expect(await refusal(removeSession(portal.ctx, row, admin))).toEqual(sessionNotFound);
    // The key that uploaded it: its limits find no session to check, and the delete finds none.
    const key = await authenticateKey(portal.ctx, keyA.key, { address: '127.0.0.1', onLegacyKey: () => undefined });
    expect(await refusal(removeSession(portal.ctx, row, key))).toEqual(sessionNotFound);
    expect(await refusal(rotateShareToken(portal.ctx, { ref: gone, actor: 'test' }))).toEqual(sessionNotFound);
    expect(await refusal(benchmarkSession(portal.ctx, gone))).toEqual(sessionNotFound);
  });

  it('a listing of a client outside the scope is a 403', async () => {
    expect(await refusal(listSessionsFor(portal.ctx, scoped, { clientId: B }))).toEqual({
      code: 'forbidden.client',
      status: 403,
      body: { error: 'Access to this client is not allowed' },
    });
    expect((await listSessionsFor(portal.ctx, scoped, { clientId: A })).sessions.length).toBeGreaterThan(0);
  });

  it('a note PostgreSQL cannot store is a 400, after the 404 of a session out of scope', async () => {
    const id = newSessionId();
    await upload(keyB.key, id);
    const change = { sessionId: id, clientId: undefined, status: 'in_review' as const, note: 'bad \u0000 note' };
    expect(await refusal(updateSessionStatus(portal.ctx, scoped, change))).toEqual(sessionNotFound);
    expect(await refusal(updateSessionStatus(portal.ctx, admin, change))).toEqual({
      code: 'invalid.note',
      status: 400,
      body: { error: 'Invalid note: NUL characters and unpaired surrogates are not allowed' },
    });
  });

  it('an empty refreshed file is a 400 and its object is deleted again', async () => {
    const id = newSessionId();
    await upload(keyA.key, id);
    const put = await portal.ctx.blobs.put('sessions/test', []);
    const input = { principal: admin, sessionId: id, clientId: A, file: 'report.html' as const, put, logger: silent };
    expect(await refusal(refreshSessionFile(portal.ctx, input))).toEqual({
      code: 'invalid.empty_body',
      status: 400,
      body: { error: 'Empty body: send the file as text/html' },
    });
    await expect(portal.ctx.blobs.get(put.key)).rejects.toThrow(/blob not found/);
  });
});
