import type { SessionFile } from '@svc/protocol';
import type { ClientTier } from '../kit/license/format.ts';
import { evaluateAlerts } from './evaluate.ts';
import { gateChannels } from './gate.ts';
import { notifyAlerts } from './notify.ts';
import type { AlertSettings } from './settings.ts';

export interface AlertStageInput {
  session: SessionFile;
  /** The prior session of the same target, or null on a first scan. */
  prior: SessionFile | null;
  settings: AlertSettings;
  /** The run's resolved license tier (the alert webhook needs business). */
  tier: ClientTier;
  now: Date;
  /** Delivery failures (pipeline.log). */
  log: (message: string) => void;
  /** License gate warnings. */
  warn: (message: string) => void;
}

/**
 * The pipeline's alerts stage: evaluate, deliver, and return the session with its
 * alerts_summary. Never throws and never waits longer than the per-channel timeout (plus a
 * little), since every alert and channel is sent in parallel. With ALERT_ENABLED=false nothing
 * is evaluated and evaluated_at is null.
 */
export async function withAlerts({
  session,
  prior,
  settings,
  tier,
  now,
  log,
  warn,
}: AlertStageInput): Promise<SessionFile> {
  const effective = { ...settings, channels: gateChannels(settings.channels, tier, warn) };
  const alerts = evaluateAlerts(session, prior, effective, now);
  const alerts_summary = await notifyAlerts({
    alerts,
    settings: effective,
    evaluatedAt: settings.enabled ? now : null,
    log,
  });
  return { ...session, alerts_summary };
}
