import fs from 'node:fs/promises';
import type { CreateLicenseBody } from '@svc/protocol';
import { afterAll, beforeAll } from 'vitest';
import { type CreatedLicense, createLicense } from '@svc/test-support/factories';
import { startTestPortal, type TestPortal, type TestPortalOptions } from '@svc/test-support/portal';

/** A real portal (in process, on its own database of the shared test cluster) and one license key issued by it. */
export interface PortalWithKey {
  portal: TestPortal;
  /** The plaintext key, as the creation answer showed it once. */
  key: string;
  license: CreatedLicense;
  /** The client the key was issued to (a fresh id no other test uses). */
  clientId: string;
  /** The portal's upload endpoint, as client tools take it (`CONSULTATION_API_URL`, `-u`). */
  uploadUrl: string;
  /** Stops the portal and removes its data directory. */
  close(): Promise<void>;
}

export interface PortalWithKeyOptions {
  /** Tier of the key (default business: every client feature is allowed). */
  tier?: CreateLicenseBody['tier'];
  portal?: TestPortalOptions;
}

export async function startPortalWithKey(opts: PortalWithKeyOptions = {}): Promise<PortalWithKey> {
  const portal = await startTestPortal(opts.portal);
  const close = async () => {
    await portal.close();
    // The data directory is the fixture's unless the caller chose it.
    if (opts.portal?.env?.['SVC_DATA_DIR'] === undefined) await fs.rm(portal.dataDir, { recursive: true, force: true });
  };
  try {
    const { key, record } = await createLicense(portal, { tier: opts.tier ?? 'business' });
    return { portal, key, license: record, clientId: record.client_id, uploadUrl: `${portal.url}/api/upload`, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * One portal with a key for the calling file (or describe block): started in beforeAll, closed in
 * afterAll. The returned object reads the live fixture, so use it inside tests and hooks only.
 */
export function usePortalWithKey(opts: PortalWithKeyOptions = {}): Readonly<Omit<PortalWithKey, 'close'>> {
  let current: PortalWithKey | undefined;
  beforeAll(async () => {
    current = await startPortalWithKey(opts);
  });
  afterAll(async () => {
    await current?.close();
    current = undefined;
  });
  const live = (): PortalWithKey => {
    if (current === undefined) throw new Error('the portal starts in beforeAll: read it inside a test or a hook');
    return current;
  };
  return {
    get portal() {
      return live().portal;
    },
    get key() {
      return live().key;
    },
    get license() {
      return live().license;
    },
    get clientId() {
      return live().clientId;
    },
    get uploadUrl() {
      return live().uploadUrl;
    },
  };
}
