import type { AlertsSummaryBlock } from '@svc/protocol';
import type { Static } from '@sinclair/typebox';
import { sendEmail } from './email.ts';
import type { AlertPayload } from './evaluate.ts';
import { sendSlack } from './slack.ts';
import { configuredChannels, type AlertChannels, type AlertSettings, type ChannelName } from './settings.ts';
import { sendWebhook } from './webhook.ts';

/**
 * Delivery of triggered alerts: each alert to each configured channel, all in parallel, each
 * delivery bounded by the per-channel timeout. Never throws: a failing or hanging channel is
 * logged (channel name and reason, never a URL, address list or password) and left out of
 * channels_notified.
 */

export type AlertsSummary = Static<typeof AlertsSummaryBlock>;

export interface ChannelResult {
  channel: ChannelName;
  ok: boolean;
  /** Why it failed; null when it accepted. */
  reason: string | null;
}

/** Resolves with the promise's outcome, or rejects when `ms` pass first; the timer never outlives it. */
function bounded(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms);
  });
  return Promise.race([work, limit]).finally(() => clearTimeout(timer));
}

function deliver(channel: ChannelName, channels: AlertChannels, alert: AlertPayload, timeoutMs: number): Promise<void> {
  switch (channel) {
    case 'email':
      return sendEmail(channels.email!, alert, timeoutMs);
    case 'slack':
      return sendSlack(channels.slack!, alert, timeoutMs);
    case 'webhook':
      return sendWebhook(channels.webhook!, alert, timeoutMs);
  }
}

/** One alert to every configured channel; the result of each, in the channels' order. */
export async function sendToChannels(
  alert: AlertPayload,
  channels: AlertChannels,
  timeoutMs: number,
  log: (message: string) => void,
): Promise<ChannelResult[]> {
  return Promise.all(
    configuredChannels(channels).map(async (channel): Promise<ChannelResult> => {
      try {
        // A little slack over the channel's own bound so its clearer reason wins the race.
        await bounded(deliver(channel, channels, alert, timeoutMs), timeoutMs + 500);
        return { channel, ok: true, reason: null };
      } catch (err) {
        const reason = (err as Error).message;
        log(`alert ${alert.alert_type}: ${channel} channel failed: ${reason}`);
        return { channel, ok: false, reason };
      }
    }),
  );
}

export interface NotifyInput {
  alerts: AlertPayload[];
  settings: AlertSettings;
  /** When the rules ran; null when alerts are disabled (ALERT_ENABLED=false). */
  evaluatedAt: Date | null;
  log: (message: string) => void;
}

/** Sends every alert and returns the session's alerts_summary block. */
export async function notifyAlerts({ alerts, settings, evaluatedAt, log }: NotifyInput): Promise<AlertsSummary> {
  const results = await Promise.all(alerts.map((a) => sendToChannels(a, settings.channels, settings.timeout_ms, log)));
  return {
    evaluated_at: evaluatedAt === null ? null : evaluatedAt.toISOString(),
    total_triggered: alerts.length,
    alerts_triggered: alerts.map((a, i) => ({
      type: a.alert_type as 'risk_threshold' | 'new_critical' | 'scan_complete',
      timestamp: a.timestamp,
      message: a.message,
      channels_notified: (results[i] ?? []).filter((r) => r.ok).map((r) => r.channel),
    })),
    config: {
      risk_threshold: settings.risk_threshold,
      on_new_critical: settings.on_new_critical,
      on_scan_complete: settings.on_scan_complete,
      channels: configuredChannels(settings.channels),
    },
  };
}
