import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  checkScheduleFields,
  DEFAULT_SCAN_MAX_ADDRESSES,
  type DeliveredSchedule,
  PORTAL_SCHEDULE_ID_PATTERN,
  type PortalSchedulesAnswer,
  SCAN_BUDGET_SETTING,
  type ScanBudget,
  scanBudgetOf,
} from '@svc/protocol';
import { replaceFileSync } from '@svc/protocol/node';
import type { AgentLogger } from './types.ts';

/**
 * The schedules the portal keeps for this agent (docs/agent.md "Schedules kept by the
 * portal"), as its heartbeat answers last handed them: one JSON file (mode 600, replaced
 * durably) per portal origin and agent id in the state directory, so they run from the
 * start of the daemon, before its first heartbeat, and one portal's set never runs under
 * another portal.
 */

export interface PortalScheduleSet {
  revision: number;
  items: DeliveredSchedule[];
}

const EMPTY: PortalScheduleSet = { revision: 0, items: [] };
const ID = new RegExp(PORTAL_SCHEDULE_ID_PATTERN);

export function portalSchedulesFileOf(stateDir: string, portalOrigin: string, agentId: string): string {
  const key = createHash('sha256').update(`${portalOrigin}\n${agentId}`).digest('hex').slice(0, 16);
  return path.join(stateDir, `portal-schedules-${key}.json`);
}

/**
 * The items this agent can run: each checked again by the rules the portal checked it with
 * (within the agent's own scan budget); one that fails is logged and left out, the others run.
 */
export function usableSchedules(items: readonly unknown[], budget: ScanBudget, log: AgentLogger): DeliveredSchedule[] {
  const out: DeliveredSchedule[] = [];
  for (const raw of items) {
    const s = raw as Partial<DeliveredSchedule>;
    const id = typeof s.id === 'string' && ID.test(s.id) ? s.id : null;
    const checked =
      id === null || typeof s.targets !== 'string' || typeof s.cron !== 'string'
        ? ({ ok: false, message: 'is not a schedule' } as const)
        : checkScheduleFields(
            {
              targets: s.targets,
              ports: typeof s.ports === 'string' ? s.ports : null,
              profile: typeof s.profile === 'string' ? s.profile : null,
              cron: s.cron,
              timezone: typeof s.timezone === 'string' ? s.timezone : 'UTC',
            },
            budget,
          );
    if (!checked.ok) {
      log.warning('portal schedule refused', { schedule_id: id ?? 'unknown', reason: checked.message });
      continue;
    }
    out.push({
      id: id as string,
      name: typeof s.name === 'string' ? s.name : (id as string),
      ...checked.value,
      upload: s.upload !== false,
    });
  }
  return out;
}

/** The stored set, or none (revision 0) when there is no file; an unreadable file is logged and set aside. */
export function readPortalSchedules(file: string, budget: ScanBudget, log: AgentLogger): PortalScheduleSet {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return EMPTY;
    log.warning('portal schedules not readable', { file, error: (err as Error).message });
    return EMPTY;
  }
  try {
    const v = JSON.parse(text) as Partial<PortalScheduleSet>;
    if (typeof v.revision === 'number' && Number.isSafeInteger(v.revision) && v.revision >= 0 && Array.isArray(v.items))
      return { revision: v.revision, items: usableSchedules(v.items, budget, log) };
  } catch {
    // Reported below.
  }
  const aside = `${file}.corrupt-${Date.now()}`;
  fs.renameSync(file, aside);
  log.warning('portal schedules file unreadable: kept aside, waiting for the portal to send them again', { aside });
  return EMPTY;
}

export function writePortalSchedules(file: string, set: PortalSchedulesAnswer): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  replaceFileSync(file, `${JSON.stringify({ revision: set.revision, items: set.items }, null, 2)}\n`, {
    durable: true,
    mode: 0o600,
  });
}

export interface PortalSchedulesOptions {
  stateDir: string;
  agentId: string;
  log: AgentLogger;
  /** The configured portal's origin (the set is kept per origin). */
  origin(): string;
  /** The settings `svc scan` children see: the agent's own scan budget (SVC_SCAN_MAX_ADDRESSES) is theirs. */
  childEnv(): NodeJS.ProcessEnv;
  scheduler: { loadPortal(items: readonly DeliveredSchedule[]): void };
}

/** The daemon's side: the revision heartbeats report, the stored set loaded at start, a new set taken from an answer. */
export class PortalSchedules {
  readonly #opts: PortalSchedulesOptions;
  #revision = 0;

  constructor(opts: PortalSchedulesOptions) {
    this.#opts = opts;
  }

  /** What the heartbeat reports as portal_schedules_revision. */
  get revision(): number {
    return this.#revision;
  }

  #budget(): ScanBudget {
    const b = scanBudgetOf(this.#opts.childEnv()[SCAN_BUDGET_SETTING]);
    return b.ok ? b.budget : { maxAddresses: DEFAULT_SCAN_MAX_ADDRESSES };
  }

  #file(): string {
    return portalSchedulesFileOf(this.#opts.stateDir, this.#opts.origin(), this.#opts.agentId);
  }

  /** At start and after a reload (the portal may be another one): the stored set of the configured portal. */
  restore(): number {
    const set = readPortalSchedules(this.#file(), this.#budget(), this.#opts.log);
    this.#revision = set.revision;
    this.#opts.scheduler.loadPortal(set.items);
    return set.items.length;
  }

  /** A heartbeat answer's set: stored first (so a restart runs it), then run. */
  take(answer: PortalSchedulesAnswer): void {
    const { log } = this.#opts;
    try {
      writePortalSchedules(this.#file(), answer);
    } catch (err) {
      // Still run it; a restart before the next change runs the previous set until the portal sends this one again.
      log.warning('portal schedules not stored', { error: (err as Error).message });
    }
    const items = usableSchedules(answer.items, this.#budget(), log);
    this.#revision = answer.revision;
    this.#opts.scheduler.loadPortal(items);
    log.info('portal schedules received', { revision: answer.revision, schedules: items.map((s) => s.id).join(',') });
  }
}
