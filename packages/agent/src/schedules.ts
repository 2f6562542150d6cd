import { cronOptions, type DeliveredSchedule, type HeartbeatSchedule, normalizeCron } from '@svc/protocol';
import { Cron } from 'croner';
import { scheduleId } from '@svc/client/kit';
import type { ScheduleFile } from './config.ts';
import type { ScanOutcome, ScheduledScan } from './scan-child.ts';
import type { AgentLogger, ScheduleChange, ScheduleControl } from './types.ts';
import { sleepAtLeast } from './wall-clock-sleep.ts';

type Source = 'local' | 'portal';

interface Entry {
  config: string;
  id: string;
  /** `local`: a config file; `portal`: kept by the portal (docs/agent.md "Schedules kept by the portal"). */
  source: Source;
  /** The IANA time zone a portal schedule's cron is read in (local ones: the host's). */
  timezone: string | undefined;
  scan: ScheduledScan;
  job: Cron | null;
  lastRun: Date | null;
  lastStatus: 'none' | 'success' | 'failed';
  retryCount: number;
  running: Promise<void> | null;
  deleted: boolean;
}

/** The schedule fields plus what the schedule runs (the portal keeps extra keys as reported). */
export type ReportedSchedule = HeartbeatSchedule & {
  cron: string;
  /** Local schedules only. */
  targets?: string;
  profile?: string;
  source: Source;
  name?: string;
  timezone?: string;
};

export interface SchedulerOptions {
  log: AgentLogger;
  runScan(scan: ScheduledScan, signal: AbortSignal): Promise<ScanOutcome>;
  /** Read at each run, so push_config changes apply to the next one. */
  retryMax(): number;
  retryBackoffMs(): number;
}

/** Cron patterns as croner reads them: 5 fields, or 6 with seconds first, in the schedule's time zone. */
function cronJob(pattern: string, run: () => void, paused: boolean, timezone?: string): Cron {
  return new Cron(normalizeCron(pattern), { ...cronOptions(timezone), paused, protect: true }, run);
}

/** What one schedule runs, wherever it was defined. */
interface Definition {
  config: string;
  id: string;
  source: Source;
  timezone: string | undefined;
  scan: ScheduledScan;
}

const PORTAL_CONFIG = 'portal';

/**
 * The schedules of the configs directory: one croner job each, never two runs of one schedule
 * at once (a tick during a run is skipped), retries with backoff, and the state heartbeats
 * report. Also the in-memory side of update_schedule (never written back to the files).
 */
export class Scheduler implements ScheduleControl {
  readonly #opts: SchedulerOptions;
  readonly #entries = new Map<string, Entry>();
  readonly #abort = new AbortController();
  #started = false;
  #halted = false;

  /** New jobs wait: before start(), and for good once halted. */
  get #paused(): boolean {
    return !this.#started || this.#halted;
  }

  constructor(opts: SchedulerOptions) {
    this.#opts = opts;
  }

  /** (Re)loads the schedule files; a schedule that is still there keeps its run state. */
  load(files: readonly ScheduleFile[]): void {
    this.#replace(
      'local',
      files.map((file) => {
        const id = scheduleId(file.targets, file.cron);
        return {
          config: file.config,
          id,
          source: 'local',
          timezone: undefined,
          scan: {
            scheduleId: id,
            targets: file.targets,
            cron: file.cron,
            profile: file.profile,
            ports: file.ports,
            upload: file.upload,
          },
        };
      }),
    );
  }

  /** (Re)loads the portal's schedules (checked by the caller); one that is still there keeps its run state. */
  loadPortal(items: readonly DeliveredSchedule[]): void {
    this.#replace(
      'portal',
      items.map((s) => ({
        config: PORTAL_CONFIG,
        id: s.id,
        source: 'portal',
        timezone: s.timezone,
        scan: {
          scheduleId: s.id,
          name: s.name,
          targets: s.targets,
          cron: s.cron,
          profile: s.profile ?? undefined,
          ports: s.ports ?? undefined,
          upload: s.upload,
        },
      })),
    );
  }

  /** The schedules of one source become `defs`; the other source's are untouched. */
  #replace(source: Source, defs: readonly Definition[]): void {
    const seen = new Set<string>();
    for (const def of defs) {
      const { id, scan } = def;
      seen.add(id);
      const old = this.#entries.get(id);
      old?.job?.stop();
      let job: Cron | null = null;
      try {
        job = cronJob(scan.cron, () => this.#tick(id), this.#paused, def.timezone);
      } catch (err) {
        this.#opts.log.error('schedule has an invalid cron pattern', {
          config: def.config,
          schedule_id: id,
          cron: scan.cron,
          error: (err as Error).message,
        });
      }
      this.#entries.set(id, {
        config: def.config,
        id,
        source,
        timezone: def.timezone,
        scan,
        job,
        lastRun: old?.lastRun ?? null,
        lastStatus: old?.lastStatus ?? 'none',
        retryCount: old?.retryCount ?? 0,
        running: old?.running ?? null,
        deleted: false,
      });
    }
    for (const [id, entry] of this.#entries)
      if (entry.source === source && !seen.has(id)) {
        entry.job?.stop();
        this.#entries.delete(id);
      }
  }

  start(): void {
    this.#started = true;
    if (this.#halted) return;
    for (const e of this.#entries.values()) if (!e.deleted) e.job?.resume();
  }

  /** No run starts from now on (no tick, no retry); running scans go on until stop(). */
  halt(): void {
    this.#halted = true;
    for (const e of this.#entries.values()) e.job?.pause();
  }

  /** Stops every job and ends running scans; resolves when they are gone. */
  async stop(): Promise<void> {
    for (const e of this.#entries.values()) e.job?.stop();
    this.#abort.abort();
    await Promise.all([...this.#entries.values()].map((e) => e.running));
  }

  report(): ReportedSchedule[] {
    const out: ReportedSchedule[] = [];
    for (const e of this.#entries.values()) {
      if (e.deleted) continue;
      const next = e.job?.nextRun() ?? null;
      out.push({
        config: e.config,
        schedule_id: e.id,
        last_run: e.lastRun?.toISOString() ?? null,
        last_status: e.lastStatus,
        next_run: (next ?? new Date(0)).toISOString(),
        retry_count: e.retryCount,
        cron: normalizeCron(e.scan.cron),
        source: e.source,
        // A portal schedule's targets and profile are the portal's own: the heartbeat stays small.
        ...(e.source === 'portal'
          ? { name: e.scan.name ?? e.id, ...(e.timezone === undefined ? {} : { timezone: e.timezone }) }
          : { targets: e.scan.targets, ...(e.scan.profile === undefined ? {} : { profile: e.scan.profile }) }),
      });
    }
    return out;
  }

  has(id: string): boolean {
    return this.#entries.has(id);
  }

  apply(id: string, action: 'update' | 'create' | 'delete', change: ScheduleChange): string {
    const entry = this.#entries.get(id);
    if (entry === undefined) throw new Error(`No loaded schedule ${id}`);
    // The portal's copy wins at its next change: editing it here would drift from what the portal shows.
    if (entry.source === 'portal')
      throw new Error(
        `schedule ${id} is kept by the portal: change, disable or delete it there (console Schedules page, PATCH or DELETE /api/agent-schedules)`,
      );
    if (action === 'delete') {
      entry.job?.stop();
      entry.job = null;
      entry.deleted = true;
      return `Schedule ${id} deleted in memory (its config file ${entry.config} is kept)`;
    }
    const scan = {
      ...entry.scan,
      ...(change.cron === undefined ? {} : { cron: change.cron }),
      ...(change.targets === undefined ? {} : { targets: change.targets }),
      ...(change.profile === undefined ? {} : { profile: change.profile }),
    };
    // Built before anything changes, so a bad pattern leaves the schedule as it was.
    let job: Cron;
    try {
      job = cronJob(scan.cron, () => this.#tick(id), this.#paused, entry.timezone);
    } catch (err) {
      throw new Error(`Invalid cron pattern "${scan.cron}": ${(err as Error).message}`);
    }
    entry.job?.stop();
    entry.job = job;
    entry.scan = scan;
    entry.deleted = false;
    return `Schedule ${id} ${action === 'create' ? 'created' : 'updated'} in memory (not persisted)`;
  }

  #tick(id: string): void {
    const entry = this.#entries.get(id);
    if (entry === undefined || entry.deleted || this.#halted || this.#abort.signal.aborted) return;
    if (entry.running !== null) {
      this.#opts.log.info('schedule still running: this tick is skipped', { schedule_id: id });
      return;
    }
    entry.running = this.#runWithRetries(entry).finally(() => {
      entry.running = null;
    });
  }

  async #runWithRetries(entry: Entry): Promise<void> {
    const { log } = this.#opts;
    const signal = this.#abort.signal;
    const retryMax = this.#opts.retryMax();
    for (let attempt = 0; attempt <= retryMax && !signal.aborted; attempt++) {
      if (attempt > 0) {
        // Up to half the backoff again, at random: members of a group refused together (one session
        // id, docs/findings-of-record.md#session-ids) start their retries in different seconds.
        const backoff = this.#opts.retryBackoffMs();
        const ok = await sleepAtLeast(backoff + Math.floor(Math.random() * (backoff / 2)), signal);
        if (!ok || this.#halted) return;
      }
      entry.lastRun = new Date();
      log.info('scheduled scan started', { schedule_id: entry.id, targets: entry.scan.targets, attempt: attempt + 1 });
      const outcome = await this.#opts.runScan(entry.scan, signal);
      if (signal.aborted) return;
      if (outcome.exitCode === 0) {
        entry.lastStatus = 'success';
        entry.retryCount = 0;
        log.info('scheduled scan done', { schedule_id: entry.id, session: outcome.sessionPath ?? undefined });
        return;
      }
      entry.lastStatus = 'failed';
      entry.retryCount += 1;
      log.warning('scheduled scan failed', {
        schedule_id: entry.id,
        exit_code: outcome.exitCode,
        retry_count: entry.retryCount,
        stderr: outcome.stderrTail,
      });
    }
  }
}
