import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticateEither, authenticateKey, authenticateUser, type KeyCaller } from '../src/auth/authenticate.ts';
import { DomainError } from '../src/domain/errors.ts';
import { bearerTokenOf, type Credentials, credentialsOf } from '../src/http/credentials.ts';
import { findUserByNormalizedEmail } from '../src/identity/queries.ts';
import { createUser, deleteUser, updateUser } from '../src/identity/user-admin.ts';
import type { UserRow } from '../src/identity/users.ts';
import { ADMIN_EMAIL, LEGACY_KEY, login, startTestPortal, type TestPortal } from '@svc/test-support/portal';

/**
 * The credential reader returns plain values, and the identity and auth
 * rules take them and throw domain errors with stable codes and the messages.
 */

const STRONG = 'violet-harbour-tractor-91';

async function refusal(work: Promise<unknown>): Promise<{ code: string; message: string }> {
  const err = await work.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof DomainError)) throw new Error(`expected a DomainError, got ${String(err)}`);
  return { code: err.code, message: err.message };
}

describe('credentialsOf', () => {
  it('reads the three credential headers, trimmed, blank as missing, the first of repeated ones', () => {
    expect(credentialsOf({ 'x-api-key': '  k1 ', 'x-identity-token': 't1' })).toEqual({
      authorization: undefined,
      identityToken: 't1',
      apiKey: 'k1',
    });
    expect(credentialsOf({ 'x-api-key': ['k1', 'k2'], 'x-identity-token': '   ', authorization: 'Bearer x' })).toEqual({
      authorization: 'Bearer x',
      identityToken: undefined,
      apiKey: 'k1',
    });
    expect(credentialsOf({ authorization: '' }).authorization).toBe('');
  });

  it('takes a bearer token from Authorization and nothing else', () => {
    const of = (authorization: string | undefined) =>
      bearerTokenOf({ authorization, identityToken: undefined, apiKey: undefined });
    expect(of('Bearer abc.def')).toBe('abc.def');
    expect(of('bearer   abc')).toBe('abc');
    expect(of('Basic abc')).toBeUndefined();
    expect(of('Bearer a b')).toBeUndefined();
    expect(of(undefined)).toBeUndefined();
  });
});

describe('identity and auth rules', () => {
  let portal: TestPortal;
  let admin: UserRow;
  const legacyUses: string[] = [];
  const caller: KeyCaller = { address: '192.0.2.7', onLegacyKey: () => legacyUses.push('legacy') };
  const none: Credentials = { authorization: undefined, identityToken: undefined, apiKey: undefined };

  beforeAll(async () => {
    portal = await startTestPortal();
    const row = await findUserByNormalizedEmail(portal.ctx.db, ADMIN_EMAIL);
    if (!row) throw new Error('no bootstrap admin');
    admin = row;
  });
  afterAll(async () => {
    await portal?.close();
  });

  it('refuses a member without client ids, a weak password and a taken e-mail', async () => {
    expect(await refusal(createUser(portal.ctx, admin, { email: 'm1@test.local', password: STRONG }))).toEqual({
      code: 'invalid.member_without_client',
      message: 'A member needs at least one client id in client_ids',
    });
    const weak = await refusal(
      createUser(portal.ctx, admin, { email: 'm1@test.local', password: 'password1', client_ids: ['c1'] }),
    );
    expect(weak.code).toBe('invalid.weak_password');
    expect(weak.message).toMatch(/^Password is too weak \(strength \d of 4, at least 3 required\)/);
    expect(
      await refusal(
        createUser(portal.ctx, admin, { email: ` ${ADMIN_EMAIL.toUpperCase()}`, password: STRONG, client_ids: ['c1'] }),
      ),
    ).toEqual({ code: 'conflict.user_email', message: 'A user with this e-mail already exists' });
  });

  it('keeps the last admin and answers not_found.user for an unknown id', async () => {
    expect(await refusal(updateUser(portal.ctx, admin, admin.id, { role: 'member', client_ids: ['c1'] }))).toEqual({
      code: 'conflict.last_admin_demoted',
      message: 'Cannot demote the last admin',
    });
    expect(await refusal(deleteUser(portal.ctx, admin, admin.id))).toEqual({
      code: 'conflict.last_admin_deleted',
      message: 'Cannot delete the last admin',
    });
    expect(await refusal(deleteUser(portal.ctx, admin, 'usr_0000000000000000'))).toEqual({
      code: 'not_found.user',
      message: 'User not found',
    });
    const member = await createUser(portal.ctx, admin, {
      email: 'm2@test.local',
      password: STRONG,
      client_ids: ['c1'],
    });
    expect(await refusal(updateUser(portal.ctx, admin, member.id, { client_ids: [] }))).toEqual({
      code: 'invalid.member_without_client',
      message: 'A member needs at least one client id in client_ids',
    });
    await deleteUser(portal.ctx, admin, member.id);
    expect(await findUserByNormalizedEmail(portal.ctx.db, 'm2@test.local')).toBeUndefined();
  });

  it('refuses keys with the documented status, as domain errors', async () => {
    expect(await refusal(authenticateKey(portal.ctx, undefined, caller))).toEqual({
      code: 'forbidden.api_key_missing',
      message: 'Missing API key',
    });
    expect(await refusal(authenticateKey(portal.ctx, 'svc_pro_nope', caller, { refusal: 'unauthorized' }))).toEqual({
      code: 'unauthorized.api_key_invalid',
      message: 'Invalid API key',
    });
    expect(legacyUses).toEqual([]);
    expect((await authenticateKey(portal.ctx, LEGACY_KEY, caller)).kind).toBe('legacy');
    expect(legacyUses).toEqual(['legacy']);
  });

  it('gives every token failure the one plain Unauthorized, and members forbidden.admin_only', async () => {
    const plain = { code: 'unauthorized.token', message: 'Unauthorized' };
    expect(await refusal(authenticateUser(portal.ctx, undefined))).toEqual(plain);
    expect(await refusal(authenticateUser(portal.ctx, 'not-a-jwt'))).toEqual(plain);
    expect(await refusal(authenticateEither(portal.ctx, { ...none, authorization: 'Bearer x' }, caller))).toEqual(
      plain,
    );
    const user = await authenticateUser(portal.ctx, await portal.adminToken(), { adminOnly: true });
    expect({ kind: user.kind, admin: user.admin, email: user.email }).toEqual({
      kind: 'user',
      admin: true,
      email: ADMIN_EMAIL,
    });
    expect(await authenticateEither(portal.ctx, none, caller)).toBeNull();
    await createUser(portal.ctx, admin, { email: 'm3@test.local', password: STRONG, client_ids: ['c1'] });
    const memberToken = await login(portal.url, 'm3@test.local', STRONG);
    expect(await refusal(authenticateUser(portal.ctx, memberToken, { adminOnly: true }))).toEqual({
      code: 'forbidden.admin_only',
      message: 'Admin access required',
    });
  });
});
