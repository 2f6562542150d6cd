import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { SessionFile, UploadResponse } from '@svc/protocol';
import {
  defaultBranding,
  type GenerateOptions,
  orcSettingsFrom,
  parseMix,
  planCollection,
  produceSession,
  sessionDirFiles,
  stagesInputOf,
  SYNTHETIC_ALERTS,
} from '@svc/client/engine';
import { createPortalClient } from '@svc/client/kit';
import { createLicense } from '@svc/test-support/factories';
import type { TestPortal } from '@svc/test-support/portal';

export interface SeedOptions {
  clientId: string;
  target: string;
  sessions: number;
  findings?: number;
  exceptions?: number;
  seed?: number;
  /** ORC 9.64 readiness in every session. */
  orc?: boolean;
}

export interface Seeded {
  /** The license key the sessions were uploaded with (business tier, for the client). */
  key: string;
  /** Oldest first. */
  uploads: UploadResponse[];
  docs: SessionFile[];
}

/**
 * A chain of synthetic sessions of one target (the scanner's own pipeline: findings, chained
 * remediation, exceptions, topology, compliance, reports), uploaded with the typed portal client
 * under a business key of the client, as an agent or consultant would.
 */
export async function seedSessions(portal: TestPortal, o: SeedOptions): Promise<Seeded> {
  const key = (await createLicense(portal, { tier: 'business', client_id: o.clientId })).key;
  const client = createPortalClient({
    target: { uploadUrl: `${portal.url}/api/upload`, apiKey: key, jwt: null, timeoutS: 30 },
  });
  const options: GenerateOptions = {
    target: o.target,
    sessions: o.sessions,
    findings: o.findings ?? 30,
    mix: parseMix('critical:10,high:20,medium:40,low:20,info:10'),
    intervalMs: 86_400_000,
    trend: 'improving',
    exceptions: o.exceptions ?? 2,
    seed: o.seed ?? 16,
    seeded: true,
    clientId: o.clientId,
    now: new Date('2025-03-01T00:00:00Z'),
  };
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-web-seed-'));
  const orc = o.orc ? orcSettingsFrom({ ORC_964_ENABLED: 'true', ORC_ATTEST_TRAINING: 'true' }) : undefined;
  const uploads: UploadResponse[] = [];
  const docs: SessionFile[] = [];
  try {
    let prior: SessionFile | null = null;
    for (const session of planCollection(options).sessions) {
      const input = stagesInputOf(options, session, prior);
      const out = await produceSession({
        ...input,
        settings: orc === undefined ? input.settings : { ...input.settings, orc },
        root,
        alerts: SYNTHETIC_ALERTS,
        branding: defaultBranding(),
      });
      uploads.push(await client.upload(sessionDirFiles(out.path)!));
      docs.push(out.doc);
      prior = out.doc;
    }
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
  return { key, uploads, docs };
}
