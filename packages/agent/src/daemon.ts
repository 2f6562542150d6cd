import fs from 'node:fs';
import type { DeliveredCommand, HeartbeatBody } from '@svc/protocol';
import {
  CLIENT_VERSION,
  type ClientTier,
  createPortalClient,
  featureAllowed,
  licenseState,
  type PortalClient,
  PortalError,
  resolveTarget,
  sessionsRootOf,
} from '@svc/client/kit';
import { backoffMs } from './backoff.ts';
import { type AgentConfig, childEnvOf, loadAgentConfig, requirePortal } from './config.ts';
import { agentIdOf } from './identity.ts';
import type { Install } from './install-kind.ts';
import { createLogger, type DaemonLogger } from './logger.ts';
import { appendOverride } from './overrides.ts';
import { reexecSelf } from './reexec.ts';
import { PortalSchedules } from './portal-schedules.ts';
import { runScheduledScan } from './scan-child.ts';
import { Scheduler } from './schedules.ts';
import { DaemonSettings } from './settings.ts';
import { type DaemonState, writeState } from './state-file.ts';
import { systemInfoSource } from './system-info.ts';
import { WakeableWait } from './wakeable-wait.ts';
import type { CommandHost, CommandRunner } from './types.ts';

/** svcd's exit codes (also in `svcd --help` and the systemd unit's RestartPreventExitStatus). */
export const EXIT = { ok: 0, failure: 1, usage: 2, config: 3, unregistered: 4 } as const;

/** First wait after a failed heartbeat (then doubling up to the interval). */
const BACKOFF_BASE_MS = 5_000;

export interface DaemonOptions {
  configDir: string;
  stateDir: string;
  env: NodeJS.ProcessEnv;
  home: string;
  once: boolean;
  out: NodeJS.WritableStream & { isTTY?: boolean };
  svcCommand: readonly string[];
  /**
   * bin/svcd (a release install's current/bin/svcd): a restart goes through it, so the code an
   * update brought runs (the bundle a checkout's update built, the release `current` now names).
   */
  selfCommand: string;
  install: Install;
  createRunner(host: CommandHost): CommandRunner;
}

/** The daemon: heartbeats, commands, schedules, signals. Resolves with the process exit code. */
export class Daemon {
  readonly #opts: DaemonOptions;
  readonly #startedAt = Date.now();
  readonly agentId: string;
  readonly log: DaemonLogger;
  #config: AgentConfig;
  readonly #settings: DaemonSettings;
  #portal: PortalClient;
  readonly #scheduler: Scheduler;
  readonly #portalSchedules: PortalSchedules;
  readonly #runner: CommandRunner;
  readonly #systemInfo: () => Promise<NonNullable<HeartbeatBody['system_info']>>;
  readonly #waits = new WakeableWait();
  #stopping: { graceful: boolean; code: number } | null = null;
  #restartRequested = false;
  #failures = 0;
  #tier: ClientTier = '';
  #lastHeartbeat: Date | null = null;
  #lastOk: boolean | null = null;
  #lastError: string | null = null;
  /** The batches running in the background (the runner takes them one at a time). */
  #commands: Promise<void> = Promise.resolve();
  /** The poll interval last logged (logged again when a push or reload changes it). */
  #pollLogged: number | null = null;

  /** Throws MissingSettingError when the configs lack the portal URL or key. */
  constructor(opts: DaemonOptions) {
    this.#opts = opts;
    this.#config = loadAgentConfig(opts.configDir, opts.env);
    requirePortal(this.#config.settings);
    this.agentId = agentIdOf((key) => this.#config.settings.get(key));
    this.#settings = new DaemonSettings(
      () => this.#config,
      (m, fields) => this.log.warning(m, fields),
    );
    this.log = createLogger(opts.out, opts.env, this.#settings.logLevel());
    for (const r of this.#config.refused) this.log.warning('override refused', { line: r });
    this.#portal = this.#portalClient();
    fs.mkdirSync(opts.stateDir, { recursive: true, mode: 0o700 });
    this.#systemInfo = systemInfoSource(opts.env, opts.stateDir);
    this.#scheduler = new Scheduler({
      log: this.log,
      runScan: (scan, signal) =>
        runScheduledScan({
          svcCommand: opts.svcCommand,
          env: childEnvOf(this.#config, opts.env),
          sessionsRoot: this.#sessionsRoot(),
          scan,
          signal,
          timeoutMs: this.#settings.scanTimeoutMs(),
          warn: (m) => this.log.warning(m),
        }),
      retryMax: () => this.#settings.retryMax(),
      retryBackoffMs: () => this.#settings.retryBackoffMs(),
    });
    this.#scheduler.load(this.#config.schedules);
    this.#portalSchedules = new PortalSchedules({
      stateDir: opts.stateDir,
      agentId: this.agentId,
      log: this.log,
      origin: () => new URL(this.#portal.target.uploadUrl).origin,
      childEnv: () => childEnvOf(this.#config, opts.env),
      scheduler: this.#scheduler,
    });
    this.#portalSchedules.restore(); // Kept across restarts: they run before the first heartbeat.
    this.#runner = opts.createRunner(this.#host());
  }

  #portalClient(): PortalClient {
    const warn = (m: string) => this.log?.warning(m);
    return createPortalClient({ target: resolveTarget(this.#config.settings, {}, { home: this.#opts.home, warn }) });
  }

  #sessionsRoot(): string {
    return sessionsRootOf({ settings: this.#config.settings, home: this.#opts.home });
  }

  #host(): CommandHost {
    const daemon = this;
    return {
      agentId: this.agentId,
      stateDir: this.#opts.stateDir,
      get portal() {
        return daemon.#portal;
      },
      get portalOrigin() {
        return new URL(daemon.#portal.target.uploadUrl).origin;
      },
      get commandTimeoutMs() {
        return daemon.#settings.commandTimeoutMs();
      },
      get scanTimeoutMs() {
        return daemon.#settings.scanTimeoutMs();
      },
      get sessionsRoot() {
        return daemon.#sessionsRoot();
      },
      svcCommand: this.#opts.svcCommand,
      get childEnv() {
        return childEnvOf(daemon.#config, daemon.#opts.env);
      },
      log: this.log,
      schedules: this.#scheduler,
      applyConfig: (key, value) => this.#applyConfig(key, value),
      setLogLevel: (level) => {
        this.log.level = level;
        this.log.info('log level changed', { level });
      },
      restart: () => {
        this.#restartRequested = true;
        this.#waits.wake();
      },
      reload: () => this.reload(),
      shutdown: (graceful) => this.shutdown(graceful, EXIT.ok),
      stopping: () => this.#stopping !== null || this.#restartRequested,
      install: this.#opts.install,
    };
  }

  #applyConfig(key: string, value: string): void {
    appendOverride(this.#config.configDir, key, value);
    this.#config = loadAgentConfig(this.#config.configDir, this.#opts.env);
    if (key === 'DAEMON_LOG_LEVEL') this.log.level = this.#settings.logLevel();
    this.log.info('config applied', { key, value });
    // A new interval applies at once, not after the wait that was set with the old one.
    if (key === 'DAEMON_POLL_INTERVAL' || key === 'DAEMON_HEARTBEAT_INTERVAL') this.#waits.wake();
  }

  /** SIGHUP: configs, then the overrides as the last layer (re-checked). A broken reload keeps the old config. */
  reload(): void {
    let next: AgentConfig;
    try {
      next = loadAgentConfig(this.#opts.configDir, this.#opts.env);
      requirePortal(next.settings);
    } catch (err) {
      this.log.error('reload failed: keeping the running configuration', { error: (err as Error).message });
      return;
    }
    this.#config = next;
    for (const r of next.refused) this.log.warning('override refused', { line: r });
    this.log.level = this.#settings.logLevel();
    this.#portal = this.#portalClient();
    this.#scheduler.load(next.schedules);
    this.#portalSchedules.restore();
    this.log.info('configuration reloaded', { files: next.files.length, schedules: next.schedules.length });
    this.#waits.wake();
  }

  shutdown(graceful: boolean, code: number): void {
    if (this.#stopping !== null) return;
    this.#stopping = { graceful, code };
    // No scheduled scan starts once the daemon is stopping; running ones end at the scheduler's stop.
    this.#scheduler.halt();
    this.log.info('shutting down', { graceful });
    this.#waits.wake();
    if (!graceful) void this.#scheduler.stop().then(() => process.exit(code));
  }

  async #body(): Promise<HeartbeatBody> {
    return {
      agent_id: this.agentId,
      version: CLIENT_VERSION,
      timestamp: new Date().toISOString(),
      status: 'running',
      uptime_seconds: Math.floor((Date.now() - this.#startedAt) / 1000),
      ...(this.#config.clientId === undefined ? {} : { client_id: this.#config.clientId }),
      schedules: this.#scheduler.report(),
      system_info: await this.#systemInfo(),
      portal_schedules_revision: this.#portalSchedules.revision,
    };
  }

  /** One cycle: pending reports, the license, the heartbeat, its commands. Returns the wait before the next. */
  async cycle(): Promise<number> {
    await this.#runner.flush();
    const license = await licenseState({
      settings: this.#config.settings,
      home: this.#opts.home,
      now: () => new Date(),
      warn: (m) => this.log.warning(m),
      timeoutS: 30,
    });
    this.#tier = license.tier;
    let commands: DeliveredCommand[];
    this.#lastHeartbeat = new Date();
    try {
      const answer = await this.#portal.heartbeat(await this.#body());
      commands = answer.commands;
      // Running commands an admin cancelled: stopped now, whatever the tier (the portal only cancels what it delivered).
      if (answer.cancel !== undefined) this.#runner.cancel(answer.cancel);
      if (answer.portal_schedules !== undefined) this.#portalSchedules.take(answer.portal_schedules);
    } catch (err) {
      return this.#heartbeatFailed(err);
    }
    if (this.#failures > 0) this.log.info('portal reachable again', { after_failures: this.#failures });
    this.#failures = 0;
    this.#lastOk = true;
    this.#lastError = null;
    this.log.debug('heartbeat sent', { commands: commands.length, tier: license.tier || 'community' });
    if (commands.length > 0) {
      if (featureAllowed(license.tier, 'agent_commands')) this.#runInBackground(commands);
      else
        this.log.warning('commands skipped: agent commands need the business tier', {
          tier: license.tier || 'community',
          commands: commands.map((c) => c.id).join(','),
        });
    }
    this.#writeState();
    return this.#settings.heartbeatIntervalMs();
  }

  /** A command may run up to SVC_CMD_TIMEOUT (a scan SVC_SCAN_TIMEOUT): heartbeats go on meanwhile, and a stop waits for it. */
  #runInBackground(commands: DeliveredCommand[]): void {
    this.#commands = this.#runner.run(commands).catch((err: unknown) => {
      this.log.error('command batch failed', { error: err instanceof Error ? err.message : String(err) });
    });
  }

  #heartbeatFailed(err: unknown): number {
    if (!(err instanceof PortalError)) throw err;
    this.#lastOk = false;
    this.#lastError = err.message;
    if (this.#unregistered(err, 'heartbeat')) return 0;
    this.#failures += 1;
    const wait = backoffMs(
      this.#failures,
      Math.min(BACKOFF_BASE_MS, this.#settings.heartbeatIntervalMs()),
      this.#settings.heartbeatIntervalMs(),
    );
    this.log.warning('heartbeat failed', { error: err.message, failures: this.#failures, retry_in_ms: wait });
    this.#writeState();
    return wait;
  }

  /**
   * The portal's `Agent unregistered` answer, to a heartbeat or a poll alike: logged, and the
   * daemon stops at once (exit 4); no schedule starts after it.
   */
  #unregistered(err: PortalError, source: 'heartbeat' | 'poll'): boolean {
    if (!(err.kind === 'http' && err.status === 403 && (err.portalError ?? '').startsWith('Agent unregistered')))
      return false;
    this.log.error('agent unregistered by the portal: shutting down', { agent_id: this.agentId, source });
    this.#writeState();
    this.shutdown(true, EXIT.unregistered);
    return true;
  }

  #writeState(): void {
    const state: DaemonState = {
      agent_id: this.agentId,
      pid: process.pid,
      portal: this.#portal.target.uploadUrl,
      config_dir: this.#opts.configDir,
      tier: this.#tier || 'community',
      log_level: this.log.level,
      started_at: new Date(this.#startedAt).toISOString(),
      last_heartbeat: this.#lastHeartbeat?.toISOString() ?? null,
      last_heartbeat_ok: this.#lastOk,
      last_error: this.#lastError,
      schedules: this.#scheduler.report(),
    };
    try {
      writeState(this.#opts.stateDir, state);
    } catch (err) {
      this.log.warning('state file not written', { error: (err as Error).message });
    }
  }

  /** The wait until the next heartbeat, polling GET /api/agent-commands every DAEMON_POLL_INTERVAL meanwhile. */
  async #waitPolling(waitMs: number): Promise<void> {
    const heartbeatAt = Date.now() + waitMs;
    for (;;) {
      const left = heartbeatAt - Date.now();
      if (left <= 0) return;
      const every = this.#settings.pollIntervalMs();
      if (every !== this.#pollLogged) {
        this.#pollLogged = every;
        this.log.info('polling for commands', { every_s: every / 1000 });
      }
      if (!(await this.#waits.sleep(Math.min(every, left)))) return;
      if (this.#stopping !== null || this.#restartRequested || heartbeatAt - Date.now() <= 0) return;
      await this.#poll();
    }
  }

  async #poll(): Promise<void> {
    // The heartbeat after a failed one is due soon enough; a key without commands has nothing to poll.
    if (this.#lastOk !== true || !featureAllowed(this.#tier, 'agent_commands')) return;
    let commands: DeliveredCommand[];
    try {
      const answer = await this.#portal.pollCommands(this.agentId);
      commands = answer.commands;
      if (answer.cancel !== undefined) this.#runner.cancel(answer.cancel);
    } catch (err) {
      if (!(err instanceof PortalError)) throw err;
      if (!this.#unregistered(err, 'poll')) this.log.warning('command poll failed', { error: err.message });
      return;
    }
    this.log.debug('commands polled', { commands: commands.length });
    if (commands.length > 0) this.#runInBackground(commands);
  }

  async run(): Promise<number> {
    const onHup = () => this.reload();
    const onTerm = () => this.shutdown(true, EXIT.ok);
    process.on('SIGHUP', onHup);
    process.on('SIGTERM', onTerm);
    process.on('SIGINT', onTerm);
    try {
      this.log.info('svcd started', {
        agent_id: this.agentId,
        version: CLIENT_VERSION,
        portal: this.#portal.target.uploadUrl,
        config_dir: this.#opts.configDir,
        schedules: this.#config.schedules.length,
        scan_timeout_s: this.#settings.scanTimeoutMs() / 1000,
        pid: process.pid,
      });
      await this.#runner.recover();
      if (!this.#opts.once) this.#scheduler.start();
      while (this.#stopping === null && !this.#restartRequested) {
        const wait = await this.cycle().catch((err: unknown) => {
          // One broken cycle (a runner or license error) must not end a daemon that runs for months.
          this.log.error('heartbeat cycle failed', { error: err instanceof Error ? err.message : String(err) });
          return this.#settings.heartbeatIntervalMs();
        });
        if (this.#opts.once || this.#stopping !== null || this.#restartRequested) break;
        await this.#waitPolling(wait).catch((err: unknown) => {
          this.log.error('command poll failed', { error: err instanceof Error ? err.message : String(err) });
        });
      }
      await this.#commands;
      await this.#scheduler.stop();
      if (this.#restartRequested && this.#stopping === null) {
        this.log.info('re-executing in place', { pid: process.pid });
        reexecSelf(this.#opts.selfCommand);
      }
      this.log.info('svcd stopped', { code: this.#stopping?.code ?? EXIT.ok });
      return this.#stopping?.code ?? EXIT.ok;
    } finally {
      process.off('SIGHUP', onHup);
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onTerm);
    }
  }
}
