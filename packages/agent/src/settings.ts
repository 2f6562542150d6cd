import type { AgentLogLevel } from '@svc/protocol';
import type { AgentConfig } from './config.ts';
import { isLogLevel } from './logger.ts';

const DEFAULT_HEARTBEAT_S = 300;
/** Polls for commands between heartbeats, so a long heartbeat interval does not delay them. */
const DEFAULT_POLL_S = 60;
const DEFAULT_RETRY_MAX = 3;
const DEFAULT_RETRY_BACKOFF_S = 60;
const DEFAULT_CMD_TIMEOUT_S = 300;
/** A full-port scan of a /24 takes hours, not SVC_CMD_TIMEOUT's 5 minutes (docs/decisions.md#scans-get-their-own-time-limit). */
const DEFAULT_SCAN_TIMEOUT_S = 14_400;

/**
 * The daemon's numeric settings, read from the configuration as it is at each call, so that a
 * push_config or a reload applies to the next wait. A bad value is logged and its default used.
 */
export class DaemonSettings {
  readonly #config: () => AgentConfig;
  readonly #warn: (message: string, fields: Record<string, string>) => void;

  constructor(config: () => AgentConfig, warn: (message: string, fields: Record<string, string>) => void) {
    this.#config = config;
    this.#warn = warn;
  }

  #seconds(key: string, fallback: number, min: number): number {
    try {
      return this.#config().settings.seconds(key, fallback, min);
    } catch (err) {
      this.#warn('setting ignored', { key, error: (err as Error).message });
      return fallback;
    }
  }

  logLevel(): AgentLogLevel {
    const v = this.#config().settings.get('DAEMON_LOG_LEVEL');
    return isLogLevel(v) ? v : 'info';
  }

  heartbeatIntervalMs(): number {
    return this.#seconds('DAEMON_HEARTBEAT_INTERVAL', DEFAULT_HEARTBEAT_S, 1) * 1000;
  }

  pollIntervalMs(): number {
    return this.#seconds('DAEMON_POLL_INTERVAL', DEFAULT_POLL_S, 1) * 1000;
  }

  commandTimeoutMs(): number {
    return this.#seconds('SVC_CMD_TIMEOUT', DEFAULT_CMD_TIMEOUT_S, 1) * 1000;
  }

  scanTimeoutMs(): number {
    return this.#seconds('SVC_SCAN_TIMEOUT', DEFAULT_SCAN_TIMEOUT_S, 1) * 1000;
  }

  retryMax(): number {
    return this.#seconds('DAEMON_SCAN_RETRY_MAX', DEFAULT_RETRY_MAX, 0);
  }

  retryBackoffMs(): number {
    return this.#seconds('DAEMON_SCAN_RETRY_BACKOFF', DEFAULT_RETRY_BACKOFF_S, 1) * 1000;
  }
}
