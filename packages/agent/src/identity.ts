import { createHash } from 'node:crypto';
import os from 'node:os';

/**
 * `svcd_` + the first 8 hex of md5(hostname); SVC_AGENT_ID overrides, from a config file or the
 * environment like every other key (cloned hosts with one host name set their own).
 */
export function agentIdOf(setting: (key: string) => string | undefined, hostname: string = os.hostname()): string {
  const override = setting('SVC_AGENT_ID')?.trim();
  if (override !== undefined && override !== '') return override;
  return `svcd_${createHash('md5').update(hostname, 'utf8').digest('hex').slice(0, 8)}`;
}
