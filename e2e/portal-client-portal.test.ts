import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPortal } from '@svc/test-support/portal';
import { sessionDoc } from '@svc/test-support/upload';
import { createPortalClient, PortalError } from '@svc/client/kit';
import { usePortalWithKey } from './helpers/portal-with-key.ts';

/** The typed client against the real portal: its answers pass the protocol's schemas. */
let portal: TestPortal;
let key: string;
let work: string;

const fixture = usePortalWithKey({ tier: 'business' });

beforeAll(async () => {
  ({ portal, key } = fixture);
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'portal-client-real-'));
});
afterAll(async () => {
  await fs.rm(work, { recursive: true, force: true });
});

describe('typed portal client against the real portal', () => {
  it('health, license, upload, share, download, heartbeat and poll all answer typed', async () => {
    const client = createPortalClient({
      target: { uploadUrl: `${portal.url}/api/upload`, apiKey: key, jwt: null, timeoutS: 30 },
    });
    expect((await client.health()).status).toBe('ok');
    const license = await client.license();
    expect({ valid: license.valid, tier: license.tier, reason: license.reason }).toEqual({
      valid: true,
      tier: 'business',
      reason: 'ok',
    });

    const doc = sessionDoc('session-minimal.json');
    const id = doc['metadata']['session_id'] as string;
    const file = path.join(work, 'session_results.json');
    await fs.writeFile(file, JSON.stringify(doc));
    const uploaded = await client.upload({ session: file });
    expect(uploaded.session_id).toBe(id);
    const shared = await client.share(uploaded.share_token as string);
    expect({ session_id: shared.session_id, files: shared.files }).toEqual({
      session_id: id,
      files: ['session_results.json'],
    });
    expect((JSON.parse((await client.download(id)).toString('utf8')) as typeof doc)['metadata']['session_id']).toBe(id);

    const beat = await client.heartbeat({
      agent_id: 'pi-typed',
      version: '1.0.0',
      timestamp: new Date().toISOString(),
      status: 'idle',
      uptime_seconds: 1,
    });
    expect(beat.commands).toEqual([]);
    expect(await client.pollCommands('pi-typed')).toEqual({ commands: [] });
  });

  it("a refused key is an http error with the portal's status and message", async () => {
    const client = createPortalClient({
      target: { uploadUrl: `${portal.url}/api/upload`, apiKey: `svc_biz_${'0'.repeat(64)}`, jwt: null, timeoutS: 30 },
    });
    const err = await client.upload({ session: path.join(work, 'session_results.json') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PortalError);
    const e = err as PortalError;
    expect({ kind: e.kind, status: e.status }).toEqual({ kind: 'http', status: 403 });
    expect(e.message).toBe(`HTTP 403 ${e.portalError}`);
    expect(e.portalError).toEqual(expect.any(String));
  });
});
