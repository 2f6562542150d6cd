import type { Settings } from '../kit/config/settings.ts';
import type { Installable } from './installable.ts';

/** What the host readiness checks (checks.ts) decide and what they read the host through. */
export type CheckStatus = 'pass' | 'warn' | 'fail';

export const CHECK_NAMES = [
  'platform',
  'bash version',
  'core dependencies',
  'optional dependencies',
  'MD5 hashing',
  'cron',
  'disk space',
  'network connectivity',
] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

export interface CheckResult {
  name: CheckName;
  status: CheckStatus;
  detail: string;
  /** What `--fix` installs for this check (not part of the JSON output). */
  fix?: Installable[];
}

export interface HostContext {
  env: NodeJS.ProcessEnv;
  /** HOME: its filesystem is the one whose free space is checked. */
  home: string;
  platform: NodeJS.Platform;
  arch: string;
  settings: Settings;
  /** Timeout of the portal health request. */
  networkTimeoutMs?: number;
}
