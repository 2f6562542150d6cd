import { gate } from '../kit/license/gates.ts';
import type { ClientTier } from '../kit/license/format.ts';
import type { AlertChannels } from './settings.ts';

/**
 * docs/cli.md#license-tier lists `webhooks` among the soft gates; on the scanner
 * the only webhook is the scan-time alert webhook, so ALERT_WEBHOOK_URL needs business or above
 * (warn and skip). E-mail and chat alerts are core (`alerts`) and never gated.
 */
export function gateChannels(
  channels: AlertChannels,
  tier: ClientTier,
  warn: (message: string) => void,
): AlertChannels {
  if (channels.webhook === null || gate(tier, 'webhooks', warn)) return channels;
  return { ...channels, webhook: null };
}
