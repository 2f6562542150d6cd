import { afterEach, describe, expect, it } from 'vitest';
import { createLicense } from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { createTestCa, HttpsReceiver } from '@svc/test-support/https-receiver';
import { sampleValue, scrape, type Scrape } from '@svc/test-support/metrics-scrape';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { expectFiring, type Phase, type Shape } from '@svc/test-support/promtool';
import { newSessionId, postUpload, sessionDoc, sessionParts } from '@svc/test-support/upload';
import { until } from '@svc/test-support/wait';
import { recordBackup } from '../src/operations/backup/status.ts';
import { type S3Peer, startS3Peer } from './helpers/s3-peer.ts';

/**
 * Each new alert rule of deploy/prometheus/svc-portal-alerts.yml fires from
 * the scrapes of a real portal in which the fault really happened, and stays quiet on a healthy
 * portal's scrapes. The scrapes become promtool's input series (test-support/promtool.ts says
 * how): a healthy phase, then the fault as observed, long enough for the rule's `for:`.
 * (The embedded database restart's rule is made to fire in embedded-restart.slow.test.ts.)
 */

const TOKEN = 'alerts-metrics-token-0123456789abcdef0123';
const HOUR_MS = 3_600_000;

/** Every family the new rules read, with how its scrapes spread over the timeline. */
const SHAPES: Record<string, Shape> = {
  svc_blob_store_failures_total: 'counter',
  svc_uploads_refused_total: 'counter',
  svc_webhook_deliveries_total: 'counter',
  svc_webhook_oldest_pending_delivery_age_seconds: 'age',
  svc_backup_last_success_timestamp_seconds: 'timestamp',
  svc_backup_max_age_seconds: 'gauge',
  svc_http_requests_total: 'counter',
};
const NEW_ALERTS = [
  'SvcPortalBlobStoreFailing',
  'SvcPortalUploadsRefusedForRoom',
  'SvcPortalClientStorageFull',
  'SvcPortalWebhookDeliveryStuck',
  'SvcPortalWebhookFailures',
  'SvcPortalBackupOverdue',
];

const opened: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const o of opened.splice(0).reverse()) await o.close();
});

async function start(env: Record<string, string> = {}, opts: { backedUp?: boolean } = {}): Promise<TestPortal> {
  const portal = await startTestPortal({ env: { SVC_METRICS_TOKEN: TOKEN, ...env } });
  opened.push(portal);
  // A backup an hour old: the backup rule stays quiet unless a test says otherwise.
  if (opts.backedUp !== false)
    await recordBackup(portal.dataDir, {
      completed_at: new Date(Date.now() - HOUR_MS).toISOString(),
      archive: 'a',
      bytes: 1,
    });
  return portal;
}

async function scrapeAt(portal: TestPortal): Promise<{ scrape: Scrape; at: Date }> {
  const at = new Date();
  const s = await scrape(portal.url, TOKEN);
  expect(s.status, s.text).toBe(200);
  return { scrape: s, at };
}

/** A healthy phase of 10 minutes, then `minutes` of the fault as scraped. */
const timeline = (healthy: Omit<Phase, 'minutes'>, fault: Omit<Phase, 'minutes'>, minutes = 30): Phase[] => [
  { ...healthy, minutes: 10 },
  { ...fault, minutes },
];

const upload = (portal: TestPortal, key: string, log?: string) =>
  postUpload(portal.url, key, sessionParts(sessionDoc('session-minimal.json', newSessionId()), { log }));

describe('the new alert rules fire from real faults', () => {
  it('the blob store failing: an S3 outage turns uploads and downloads into 503s and fires SvcPortalBlobStoreFailing per operation', async () => {
    const peer: S3Peer = await startS3Peer();
    opened.push(peer);
    const portal = await start(peer.env(`alerts-${newSessionId()}`));
    const { key } = await createLicense(portal, { tier: 'business' });
    const first = await upload(portal, key);
    expect(first.status, first.text).toBe(200);
    const sessionId = first.body.session_id as string;
    const healthy = await scrapeAt(portal);
    // A healthy store: more traffic, no failure, nothing fires (and no other new alert either).
    expect((await upload(portal, key)).status).toBe(200);
    const stillHealthy = await scrapeAt(portal);
    for (const alert of NEW_ALERTS)
      await expectFiring({ phases: timeline(healthy, stillHealthy), shapes: SHAPES, alert, firing: [] });

    await peer.stop();
    for (let i = 0; i < 3; i++) expect((await upload(portal, key)).status).toBe(503);
    const download = await http(portal.url, 'GET', `/api/download?session=${sessionId}`, { headers: withKey(key) });
    expect(download.status).toBe(503);
    const fault = await scrapeAt(portal);
    const failures = (s: Scrape, operation: string) => sampleValue(s, 'svc_blob_store_failures_total', { operation });
    expect(failures(healthy.scrape, 'put')).toBe(0);
    expect(failures(fault.scrape, 'put')).toBe(3);
    expect(failures(fault.scrape, 'get')).toBe(1);
    await expectFiring({
      phases: timeline(stillHealthy, fault),
      shapes: SHAPES,
      alert: 'SvcPortalBlobStoreFailing',
      by: ['operation'],
      firing: [
        { severity: 'critical', operation: 'get' },
        { severity: 'critical', operation: 'put' },
      ],
    });
    // Five minutes of failures are not yet enough (`for: 5m` after the first failed minute).
    await expectFiring({
      phases: timeline(stillHealthy, fault, 5),
      shapes: SHAPES,
      alert: 'SvcPortalBlobStoreFailing',
      firing: [],
    });
  });

  it('uploads refused for the disk floor fire SvcPortalUploadsRefusedForRoom with reason disk', async () => {
    // A floor of 100 TB: this machine's disk is always below it, so every upload is refused before its body is read.
    const portal = await start({ SVC_MIN_FREE_DISK_MB: '100000000' });
    const { key } = await createLicense(portal, { tier: 'business' });
    const healthy = await scrapeAt(portal);
    const refused = await upload(portal, key);
    expect(refused.status).toBe(507);
    expect(refused.body.error).toMatch(/^The portal's disk is nearly full/);
    expect((await upload(portal, key)).status).toBe(507);
    const fault = await scrapeAt(portal);
    expect(sampleValue(fault.scrape, 'svc_uploads_refused_total', { reason: 'disk' })).toBe(2);
    expect(sampleValue(fault.scrape, 'svc_uploads_refused_total', { reason: 'client_limit' })).toBe(0);
    await expectFiring({
      phases: timeline(healthy, fault, 1),
      shapes: SHAPES,
      alert: 'SvcPortalUploadsRefusedForRoom',
      by: ['reason'],
      firing: [{ severity: 'critical', reason: 'disk' }],
    });
  });

  it("an upload over its client's storage limit fires SvcPortalClientStorageFull", async () => {
    const portal = await start({ SVC_CLIENT_STORAGE_LIMIT_MB: '1' });
    const { key } = await createLicense(portal, { tier: 'business' });
    const healthy = await scrapeAt(portal);
    const refused = await upload(portal, key, 'x'.repeat(1100 * 1024));
    expect(refused.status).toBe(413);
    expect(refused.body.error).toMatch(/^Storage limit of this client reached/);
    const fault = await scrapeAt(portal);
    expect(sampleValue(fault.scrape, 'svc_uploads_refused_total', { reason: 'client_limit' })).toBe(1);
    await expectFiring({
      phases: timeline(healthy, fault, 1),
      shapes: SHAPES,
      alert: 'SvcPortalClientStorageFull',
      firing: [{ severity: 'warning' }],
    });
    await expectFiring({
      phases: timeline(healthy, fault, 1),
      shapes: SHAPES,
      alert: 'SvcPortalUploadsRefusedForRoom',
      firing: [],
    });
  });

  it('a receiver that answers 500 fires SvcPortalWebhookFailures; one that never answers fires SvcPortalWebhookDeliveryStuck', async () => {
    const ca = await createTestCa();
    opened.push({ close: () => ca.cleanup() });
    const portal = await start({ SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', SVC_WEBHOOK_CA_FILE: ca.caFile });
    const admin = await portal.adminToken();
    const subscribe = async (receiver: HttpsReceiver) => {
      opened.push(receiver);
      const created = await http(portal.url, 'POST', '/api/webhooks', {
        headers: withToken(admin),
        json: { url: receiver.url(), event_types: ['status_changed'] },
      });
      expect(created.status, created.text).toBe(201);
      const id = created.body.subscription.id as string;
      return () => http(portal.url, 'POST', `/api/webhooks/ping?id=${id}`, { headers: withToken(admin) });
    };
    const healthy = await scrapeAt(portal);
    expect(sampleValue(healthy.scrape, 'svc_webhook_oldest_pending_delivery_age_seconds')).toBe(0);

    const pingFailing = await subscribe((await HttpsReceiver.start(ca)).respond({ kind: 'status', status: 500 }));
    for (let i = 0; i < 2; i++) expect((await pingFailing()).body.delivery.status).toBe('failed');
    const failing = await scrapeAt(portal);
    expect(sampleValue(failing.scrape, 'svc_webhook_deliveries_total', { outcome: 'failed' })).toBe(2);
    await expectFiring({
      phases: timeline(healthy, failing),
      shapes: SHAPES,
      alert: 'SvcPortalWebhookFailures',
      firing: [{ severity: 'warning' }],
    });

    const pingSilent = await subscribe((await HttpsReceiver.start(ca)).respond({ kind: 'hang' }));
    const stuck = pingSilent();
    let inFlight: { scrape: Scrape; at: Date } | undefined;
    await until(
      async () => {
        inFlight = await scrapeAt(portal);
        return sampleValue(inFlight.scrape, 'svc_webhook_oldest_pending_delivery_age_seconds') >= 1;
      },
      20_000,
      () => 'a delivery in flight for a second',
    );
    await expectFiring({
      phases: timeline(healthy, inFlight!),
      shapes: SHAPES,
      alert: 'SvcPortalWebhookDeliveryStuck',
      firing: [{ severity: 'warning' }],
    });
    // The delivery ends (failed after its timeouts): nothing is in flight any more.
    expect((await stuck).body.delivery.status).toBe('failed');
    const after = await scrapeAt(portal);
    expect(sampleValue(after.scrape, 'svc_webhook_oldest_pending_delivery_age_seconds')).toBe(0);
    await expectFiring({
      phases: timeline(healthy, after),
      shapes: SHAPES,
      alert: 'SvcPortalWebhookDeliveryStuck',
      firing: [],
    });
  });

  it('a last backup older than SVC_BACKUP_MAX_AGE_HOURS fires SvcPortalBackupOverdue; none recorded fires too; 0 turns it off', async () => {
    const portal = await start({ SVC_BACKUP_MAX_AGE_HOURS: '26' });
    const healthy = await scrapeAt(portal);
    expect(sampleValue(healthy.scrape, 'svc_backup_max_age_seconds')).toBe(26 * 3600);
    const ago = (hours: number) => new Date(Date.now() - hours * HOUR_MS).toISOString();
    await recordBackup(portal.dataDir, { completed_at: ago(27), archive: 'b', bytes: 1 });
    const old = await scrapeAt(portal);
    const recorded = sampleValue(old.scrape, 'svc_backup_last_success_timestamp_seconds');
    expect(Math.abs(recorded - (Date.now() - 27 * HOUR_MS) / 1000)).toBeLessThan(60);
    await expectFiring({
      phases: timeline(healthy, old, 11),
      shapes: SHAPES,
      alert: 'SvcPortalBackupOverdue',
      firing: [{ severity: 'warning' }],
    });
    // 25 hours old: within the setting, quiet.
    await recordBackup(portal.dataDir, { completed_at: ago(25), archive: 'c', bytes: 1 });
    const recent = await scrapeAt(portal);
    await expectFiring({
      phases: timeline(healthy, recent, 11),
      shapes: SHAPES,
      alert: 'SvcPortalBackupOverdue',
      firing: [],
    });

    const never = await start({ SVC_BACKUP_MAX_AGE_HOURS: '26' }, { backedUp: false });
    const none = await scrapeAt(never);
    expect(sampleValue(none.scrape, 'svc_backup_last_success_timestamp_seconds')).toBe(0);
    expect(none.scrape.families.get('svc_backup_last_success_timestamp_seconds')?.samples).toHaveLength(1);
    await expectFiring({
      phases: timeline(healthy, none, 11),
      shapes: SHAPES,
      alert: 'SvcPortalBackupOverdue',
      firing: [{ severity: 'warning' }],
    });

    const off = await start({ SVC_BACKUP_MAX_AGE_HOURS: '0' });
    const unwatched = await scrapeAt(off);
    expect(unwatched.scrape.families.get('svc_backup_last_success_timestamp_seconds')?.samples ?? []).toEqual([]);
    expect(unwatched.scrape.families.get('svc_backup_max_age_seconds')?.samples ?? []).toEqual([]);
  });
});
