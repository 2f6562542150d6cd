import type { AgentLogLevel, CommandCancel, DeliveredCommand, StatusReportBody } from '@svc/protocol';
import type { PortalClient } from '@svc/client/kit';
import type { Install } from './install-kind.ts';

/**
 * The seam between the daemon (configuration, heartbeats, schedules, signals, re-exec) and the
 * command runner (the eight command types, the on-disk journal of executed ids and unsent
 * reports). The daemon builds a CommandHost; the runner never reaches past it.
 */

export interface AgentLogger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warning(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** A schedule as update_schedule sees it (in memory only; never written back to its file). */
export interface ScheduleChange {
  cron?: string | undefined;
  profile?: string | undefined;
  targets?: string | undefined;
}

export interface ScheduleControl {
  has(scheduleId: string): boolean;
  /** Applies an update_schedule action; throws Error with a message for the report on a bad value. */
  apply(scheduleId: string, action: 'update' | 'create' | 'delete', change: ScheduleChange): string;
}

export interface CommandHost {
  agentId: string;
  /** Directory of the agent's state (journal, unsent reports), mode 700. */
  stateDir: string;
  /** Origin of the configured portal (scheme://host:port): the command journal is kept per origin and agent id. */
  portalOrigin: string;
  /** The typed portal client with the daemon's credentials (heartbeats, status reports, uploads). */
  portal: PortalClient;
  /** SVC_CMD_TIMEOUT in milliseconds (default 300 s): every command but run_scan. */
  commandTimeoutMs: number;
  /** SVC_SCAN_TIMEOUT in milliseconds (default 4 h): run_scan and scheduled scans (docs/decisions.md#scans-get-their-own-time-limit). */
  scanTimeoutMs: number;
  /** Where `svc scan` writes its session directories. */
  sessionsRoot: string;
  /** argv prefix that runs the client CLI (e.g. [<repo>/packages/client/bin/svc]). */
  svcCommand: readonly string[];
  /** Environment for child `svc` processes: the daemon's settings and credentials. */
  childEnv: NodeJS.ProcessEnv;
  log: AgentLogger;
  schedules: ScheduleControl;
  /** Applies an allowlisted key in memory at once and appends KEY=VALUE to .c2_overrides.conf. */
  applyConfig(key: string, value: string): void;
  setLogLevel(level: AgentLogLevel): void;
  /** Re-executes the daemon in place (process.execve) once the current report is sent. */
  restart(): void;
  /** Reloads configs and overrides (as SIGHUP does). */
  reload(): void;
  /** Stops the daemon: graceful finishes the running command and reports it first. */
  shutdown(graceful: boolean): void;
  /** True once a shutdown (SIGTERM, `shutdown`) or a re-exec is under way: start no further command. */
  stopping(): boolean;
  /** How the agent was installed, which decides what `update` does. */
  install: Install;
}

export type ReportBody = StatusReportBody;

export interface CommandRunner {
  /**
   * Queues delivered commands (in the journal, before it returns) and executes them in received
   * order (priority ignored), each at most once ever. A call made while an earlier batch runs
   * queues behind it; the promise settles when the queue is drained or the daemon stops.
   */
  run(commands: readonly DeliveredCommand[]): Promise<void>;
  /** On start: commands interrupted by a crash or kill -9 are reported failed, never run again. */
  recover(): Promise<void>;
  /** Sends reports kept on disk while the portal was unreachable, in order. */
  flush(): Promise<void>;
  /**
   * The portal cancelled these running commands (heartbeat or poll answer): the one running now
   * has its process tree killed and is reported failed (EXIT_CANCELLED, the reason in stderr).
   * Ids the agent is not running are ignored (their report is on its way, or the portal ends them).
   */
  cancel(cancels: readonly CommandCancel[]): void;
}
