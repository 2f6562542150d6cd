import type { Static } from '@sinclair/typebox';
import type {
  CreatedLicenseResponse,
  CreateLicenseBody,
  DeletedLicenseResponse,
  LICENSE_ACTIONS,
  LICENSE_STATUSES,
  LicenseListResponse,
  LicenseResponse,
} from '@svc/protocol';
import { apiRequest } from './client.ts';

/** License keys (admins): docs/api.md#licenses. */

export type LicenseList = Static<typeof LicenseListResponse>;
export type LicenseAction = (typeof LICENSE_ACTIONS)[number];

/** GET /api/licenses: every key, or those in one status. */
export function listLicenses(status: (typeof LICENSE_STATUSES)[number] | undefined): Promise<LicenseList> {
  return apiRequest('GET', '/api/licenses', { query: { status } });
}

/** POST /api/licenses: a new key; the answer holds its plaintext, shown once. */
export function createLicense(body: CreateLicenseBody): Promise<CreatedLicenseResponse> {
  return apiRequest('POST', '/api/licenses', { body });
}

/** PATCH /api/licenses?id=: revoke, deactivate or activate a key. */
export function changeLicense(id: string, action: LicenseAction): Promise<Static<typeof LicenseResponse>> {
  return apiRequest('PATCH', '/api/licenses', { query: { id }, body: { action } });
}

/** DELETE /api/licenses?id=: a revoked key, for good. */
export function deleteLicense(id: string): Promise<Static<typeof DeletedLicenseResponse>> {
  return apiRequest('DELETE', '/api/licenses', { query: { id } });
}
