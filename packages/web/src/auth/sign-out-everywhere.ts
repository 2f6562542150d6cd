import { revokeOwnSessions } from '../api/users.ts';
import { signOut } from './session.ts';

/**
 * Ends every session of the signed-in user, in every browser (POST /identity/user/sessions/revoke),
 * then this tab's. Throws ApiError when the identity provider could not be reached or refused,
 * so the user knows the other sessions may still be open.
 */
export async function signOutEverywhere(): Promise<void> {
  await revokeOwnSessions();
  signOut();
}
