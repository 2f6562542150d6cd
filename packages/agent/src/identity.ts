import { createHash } from 'node:crypto';
import os from 'node:os';

/** `svcd_` + the first 8 hex of md5(hostname); SVC_AGENT_ID overrides (tests, cloned hosts). */
export function agentIdOf(env: NodeJS.ProcessEnv, hostname: string = os.hostname()): string {
  const override = env['SVC_AGENT_ID']?.trim();
  if (override !== undefined && override !== '') return override;
  return `svcd_${createHash('md5').update(hostname, 'utf8').digest('hex').slice(0, 8)}`;
}
