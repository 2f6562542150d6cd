import { SessionFile, type SessionFile as SessionFileT } from '@svc/protocol';
import { Value } from '@sinclair/typebox/value';
import { afterEach, describe, expect, it } from 'vitest';
import { newCriticalHigh } from '../src/alerts/evaluate.ts';
import { alertSettingsFrom } from '../src/alerts/settings.ts';
import { withAlerts } from '../src/alerts/stage.ts';
import { stagedDocs } from '../src/synthetic/chain.ts';
import { parseMix } from '../src/synthetic/options.ts';
import { httpReceiver, type HttpReceiver } from '@svc/test-support/alerts-receivers';

/** The alerts stage over sessions of the synthetic generator, delivering to a local webhook receiver. */

const NOW = new Date('2026-11-23T10:00:00.000Z');
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

function synthetic(): [SessionFileT, SessionFileT] {
  const docs = stagedDocs({
    target: '192.168.10.0/24',
    sessions: 2,
    findings: 30,
    mix: parseMix('critical:30,high:30,medium:20,low:10,info:10'),
    intervalMs: 86_400_000,
    trend: 'worsening',
    exceptions: 0,
    seed: 7,
    seeded: true,
    now: NOW,
  });
  const [prior, latest] = [...docs].map((s) => s.doc as SessionFileT);
  return [prior!, latest!];
}

async function webhook(): Promise<HttpReceiver> {
  const r = await httpReceiver();
  closers.push(r.close);
  return r;
}

describe('withAlerts', () => {
  it('writes alerts_summary with the channels that accepted; the session stays a valid session file', async () => {
    const [prior, latest] = synthetic();
    const hook = await webhook();
    const settings = alertSettingsFrom({
      get: (k) =>
        ({
          ALERT_WEBHOOK_URL: hook.url,
          ALERT_ON_SCAN_COMPLETE: 'true',
          ALERT_RISK_THRESHOLD: '0',
          ALERT_TIMEOUT: '2',
        })[k],
    });
    const out = await withAlerts({
      session: latest,
      prior,
      settings,
      tier: 'business',
      now: NOW,
      log: () => {},
      warn: () => {},
    });

    const fresh = newCriticalHigh(latest, prior).length;
    expect(fresh).toBeGreaterThan(0);
    const types = ['risk_threshold', 'new_critical', 'scan_complete'];
    expect(out.alerts_summary).toMatchObject({
      evaluated_at: '2026-11-23T10:00:00.000Z',
      total_triggered: types.length,
      config: { risk_threshold: 0, on_new_critical: true, on_scan_complete: true, channels: ['webhook'] },
    });
    expect(out.alerts_summary?.alerts_triggered?.map((a) => [a.type, a.channels_notified])).toEqual(
      types.map((t) => [t, ['webhook']]),
    );
    expect(hook.bodies.map((b) => (b as { alert_type: string }).alert_type).sort()).toEqual([...types].sort());
    expect(hook.bodies[0]).toMatchObject({
      event: 'svc_alert',
      session_id: latest.metadata?.session_id,
      target: '192.168.10.0/24',
      risk_score: latest.summary?.risk_score,
      risk_grade: latest.summary?.risk_grade,
      total_findings: latest.summary?.total_findings,
      new_critical_high: fresh,
    });
    expect(Value.Check(SessionFile, out)).toBe(true);
    // Everything else of the session is untouched.
    expect({ ...out, alerts_summary: latest.alerts_summary }).toEqual(latest);
  });

  it('below business the webhook is gated: warned, not sent, and not a configured channel of the summary', async () => {
    const [prior, latest] = synthetic();
    const hook = await webhook();
    const warnings: string[] = [];
    const settings = alertSettingsFrom({ get: (k) => ({ ALERT_WEBHOOK_URL: hook.url, ALERT_RISK_THRESHOLD: '0' })[k] });
    const out = await withAlerts({
      session: latest,
      prior,
      settings,
      tier: '',
      now: NOW,
      log: () => {},
      warn: (m) => warnings.push(m),
    });
    expect(warnings).toEqual(['Skipping webhooks: it needs the business tier (this host: community)']);
    expect(hook.bodies).toEqual([]);
    expect(out.alerts_summary?.config?.channels).toEqual([]);
    expect(out.alerts_summary?.alerts_triggered?.[0]).toMatchObject({ type: 'risk_threshold', channels_notified: [] });
  });

  it('ALERT_ENABLED=false: nothing evaluated or sent, evaluated_at null', async () => {
    const [prior, latest] = synthetic();
    const hook = await webhook();
    const settings = alertSettingsFrom({
      get: (k) => ({ ALERT_WEBHOOK_URL: hook.url, ALERT_ENABLED: 'false', ALERT_RISK_THRESHOLD: '0' })[k],
    });
    const out = await withAlerts({
      session: latest,
      prior,
      settings,
      tier: 'msp',
      now: NOW,
      log: () => {},
      warn: () => {},
    });
    expect(out.alerts_summary).toEqual({
      evaluated_at: null,
      total_triggered: 0,
      alerts_triggered: [],
      config: { risk_threshold: 0, on_new_critical: true, on_scan_complete: false, channels: ['webhook'] },
    });
    expect(hook.bodies).toEqual([]);
  });
});
