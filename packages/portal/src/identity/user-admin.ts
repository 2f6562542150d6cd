import type { CreateUserBody, UpdateUserBody } from '@svc/protocol';
import { recordAuditEvent } from '../audit/record.ts';
import type { AppContext } from '../context.ts';
import { DomainError } from '../domain/errors.ts';
import { passwordWeakness } from './password-strength.ts';
import { hashPassword } from './passwords.ts';
import {
  deleteUserRow,
  findUserById,
  findUserByNormalizedEmail,
  insertUser,
  lockAdmins,
  lockUserForUpdate,
  revokeUserTokens,
  updateUserRow,
} from './queries.ts';
import { clearLoginFailures } from './throttle.ts';
import { newUserId, normalizeEmail, type UserRow } from './users.ts';

// Accounts managed by an admin (/identity/admin/users); `admin` is the acting admin, named in the audit log.

const memberWithoutClient = () =>
  new DomainError('invalid.member_without_client', 'A member needs at least one client id in client_ids');
const emailTaken = () => new DomainError('conflict.user_email', 'A user with this e-mail already exists');
const userNotFound = () => new DomainError('not_found.user', 'User not found');

/** The account's e-mail and the portal's host are words the estimator knows. */
function refuseWeakPassword(ctx: AppContext, password: string, email: string | null): void {
  const weakness = passwordWeakness(password, { email, host: new URL(ctx.config.baseUrl).hostname });
  if (weakness !== null) throw new DomainError('invalid.weak_password', weakness);
}

export async function createUser(ctx: AppContext, admin: UserRow, input: CreateUserBody): Promise<UserRow> {
  const { email, password } = input;
  const role = input.role ?? 'member';
  const clientIds = input.client_ids ?? [];
  if (role === 'member' && clientIds.length === 0) throw memberWithoutClient();
  refuseWeakPassword(ctx, password, email);
  if (await findUserByNormalizedEmail(ctx.db, normalizeEmail(email))) throw emailTaken();
  const passwordHash = await hashPassword(password);
  const { row, event } = await ctx.db.transaction().execute(async (trx) => {
    // The e-mail may have been taken since the check above: the insert decides.
    const row = await insertUser(trx, {
      id: newUserId(),
      email,
      email_normalized: normalizeEmail(email),
      password_hash: passwordHash,
      role,
      client_ids: clientIds,
      updated_at: new Date(),
    });
    if (!row) throw emailTaken();
    const event = await recordAuditEvent(trx, {
      event_type: 'user_created',
      actor: admin.email,
      data: { user_id: row.id, email: row.email, role, client_ids: clientIds },
    });
    return { row, event };
  });
  ctx.events.publish(event);
  return row;
}

/** A new password revokes the user's refresh-token families and access tokens. The last admin stays an admin. */
export async function updateUser(
  ctx: AppContext,
  admin: UserRow,
  id: string,
  changes: UpdateUserBody,
): Promise<UserRow> {
  if (changes.password !== undefined) {
    // The target's e-mail is one of the estimator's dictionary words; an unknown id is the 404 below.
    const target = await findUserById(ctx.db, id);
    refuseWeakPassword(ctx, changes.password, target?.email ?? null);
  }
  const passwordHash = changes.password === undefined ? undefined : await hashPassword(changes.password);
  const { row, event } = await ctx.db.transaction().execute(async (trx) => {
    const admins = await lockAdmins(trx);
    const current = await lockUserForUpdate(trx, id);
    if (!current) throw userNotFound();
    const role = changes.role ?? current.role;
    const clientIds = changes.client_ids ?? current.client_ids;
    if (role === 'member' && clientIds.length === 0) throw memberWithoutClient();
    if (current.role === 'admin' && role !== 'admin' && admins.length === 1)
      throw new DomainError('conflict.last_admin_demoted', 'Cannot demote the last admin');
    const now = ctx.now();
    const row = await updateUserRow(trx, id, {
      role,
      client_ids: clientIds,
      updated_at: now,
      ...(passwordHash ? { password_hash: passwordHash } : {}),
    });
    if (passwordHash) {
      // A new password set by an admin starts the account's e-mail from zero failures.
      await clearLoginFailures(trx, row.email_normalized);
      await revokeUserTokens(trx, id, now);
    }
    const changed = Object.keys(changes).filter((k) => k !== 'password');
    const event = await recordAuditEvent(trx, {
      event_type: 'user_updated',
      actor: admin.email,
      data: {
        user_id: id,
        email: row.email,
        changed: passwordHash ? [...changed, 'password'] : changed,
        role,
        client_ids: clientIds,
      },
    });
    return { row, event };
  });
  ctx.events.publish(event);
  return row;
}

export async function deleteUser(ctx: AppContext, admin: UserRow, id: string): Promise<void> {
  const event = await ctx.db.transaction().execute(async (trx) => {
    const admins = await lockAdmins(trx);
    const target = await findUserById(trx, id);
    if (!target) throw userNotFound();
    if (target.role === 'admin' && admins.length === 1)
      throw new DomainError('conflict.last_admin_deleted', 'Cannot delete the last admin');
    await deleteUserRow(trx, id);
    return recordAuditEvent(trx, {
      event_type: 'user_deleted',
      actor: admin.email,
      data: { user_id: id, email: target.email },
    });
  });
  ctx.events.publish(event);
}
