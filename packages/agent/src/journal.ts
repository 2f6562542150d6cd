import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { DeliveredCommand } from '@svc/protocol';
import { leftoverTemps, replaceFileSync } from '@svc/protocol/node';
import type { ReportBody } from './types.ts';

/**
 * The command journal: one JSON file (mode 600) per portal origin and agent id in the agent's
 * state directory (command ids are a portal's own sequence: portal B's command 1 is not portal
 * A's), replaced whole and durably on every change (replaceFileSync), so a crash or a power cut
 * at any moment leaves either the old state or the new one.
 *
 * - `started`: ids of every command ever started; a delivered id found here is never run again.
 * - `queue`: commands delivered but not started yet (a restart mid-batch runs them after).
 * - `current`: the command running now and its child process; found at start-up, it was cut
 *   short by a crash or kill -9 and is reported failed, never run again.
 * - `outbox`: status reports not yet accepted by the portal, oldest first.
 */

/** The journal of an agent before journals were kept per portal; adopted by the first portal that opens one. */
export const JOURNAL_FILE = 'command-journal.json';

/** The journal file of one portal origin and agent id (a state directory may hold several). */
export function journalFileOf(portalOrigin: string, agentId: string): string {
  const key = createHash('sha256').update(`${portalOrigin}\n${agentId}`).digest('hex').slice(0, 16);
  return `command-journal-${key}.json`;
}

/** Every per-portal journal file of a state directory (for recovery: a command cut short under another portal). */
export function journalFilesIn(stateDir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(stateDir);
  } catch {
    return [];
  }
  return names.filter((n) => /^command-journal-[0-9a-f]{16}\.json$/.test(n)).sort();
}
/** Started ids kept: the portal never delivers a command twice, so the newest ones are what matter. */
const STARTED_KEPT = 10_000;

export interface RunningCommand {
  command: DeliveredCommand;
  startedAt: string;
  child: { pid: number; startTime: string } | null;
}

interface JournalState {
  started: number[];
  queue: DeliveredCommand[];
  current: RunningCommand | null;
  outbox: ReportBody[];
}

const empty = (): JournalState => ({ started: [], queue: [], current: null, outbox: [] });

function isState(v: unknown): v is JournalState {
  const s = v as JournalState;
  return (
    typeof v === 'object' &&
    v !== null &&
    Array.isArray(s.started) &&
    Array.isArray(s.queue) &&
    Array.isArray(s.outbox) &&
    (s.current === null || typeof s.current === 'object')
  );
}

export class Journal {
  readonly file: string;
  private state: JournalState;

  private constructor(file: string, state: JournalState) {
    this.file = file;
    this.state = state;
  }

  /**
   * The journal of `stateDir` (created mode 700 when missing). A journal that cannot be parsed is
   * kept aside as `<file>.corrupt-<time>` and `onCorrupt` told; the agent starts from an empty one.
   */
  static open(stateDir: string, onCorrupt: (message: string) => void, name = JOURNAL_FILE): Journal {
    fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    const file = path.join(stateDir, name);
    // A temporary file is what a crash mid-write leaves; the journal itself is whole. One daemon
    // runs per state directory, so no other writer's file is removed.
    for (const tmp of leftoverTemps(file)) fs.rmSync(tmp, { force: true });
    const legacy = path.join(stateDir, JOURNAL_FILE);
    // Written before journals were per portal: it belongs to the portal the agent had then, which is
    // most likely the one it still has.
    if (name !== JOURNAL_FILE && !fs.existsSync(file) && fs.existsSync(legacy)) fs.renameSync(legacy, file);
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new Journal(file, empty());
      throw err;
    }
    try {
      const parsed: unknown = JSON.parse(text);
      if (isState(parsed)) return new Journal(file, parsed);
    } catch {
      // Reported below with the unparsable case.
    }
    const aside = `${file}.corrupt-${Date.now()}`;
    fs.renameSync(file, aside);
    onCorrupt(`command journal ${file} is unreadable; kept as ${aside}, starting with an empty journal`);
    return new Journal(file, empty());
  }

  private save(next: JournalState): void {
    replaceFileSync(this.file, JSON.stringify(next), { durable: true, mode: 0o600 });
    this.state = next;
  }

  hasStarted(id: number): boolean {
    return this.state.started.includes(id) || this.state.current?.command.id === id;
  }

  isQueued(id: number): boolean {
    return this.state.queue.some((c) => c.id === id);
  }

  get queue(): readonly DeliveredCommand[] {
    return this.state.queue;
  }

  get current(): RunningCommand | null {
    return this.state.current;
  }

  get outbox(): readonly ReportBody[] {
    return this.state.outbox;
  }

  /** Appends delivered commands to the queue, in the order given. */
  enqueue(commands: readonly DeliveredCommand[]): void {
    if (commands.length === 0) return;
    this.save({ ...this.state, queue: [...this.state.queue, ...commands] });
  }

  /** Moves the queue's head to `current`, records its id as started and queues its `acked` report, at once. */
  begin(ack: (command: DeliveredCommand) => ReportBody, now: Date): DeliveredCommand {
    const [command, ...queue] = this.state.queue;
    if (command === undefined) throw new Error('begin with an empty queue');
    this.save({
      started: [...this.state.started, command.id].slice(-STARTED_KEPT),
      queue,
      current: { command, startedAt: now.toISOString(), child: null },
      outbox: [...this.state.outbox, ack(command)],
    });
    return command;
  }

  /** Records the running command's child process (killed on recovery if it outlived the agent). */
  childStarted(child: { pid: number; startTime: string }): void {
    if (this.state.current === null) return;
    this.save({ ...this.state, current: { ...this.state.current, child } });
  }

  /** Clears `current` and queues its final report, at once. */
  finish(report: ReportBody): void {
    this.save({ ...this.state, current: null, outbox: [...this.state.outbox, report] });
  }

  /** Clears `current` without a report: the portal refused its start, so it never ran. */
  abandon(): void {
    this.save({ ...this.state, current: null });
  }

  /** Whether a report of this command waits in the outbox. */
  hasReport(id: number): boolean {
    return this.state.outbox.some((r) => r.command_id === id);
  }

  /** Queues a report again (a redelivered command whose `acked` the portal never got). */
  report(report: ReportBody): void {
    this.save({ ...this.state, outbox: [...this.state.outbox, report] });
  }

  /** Removes the oldest report once the portal has it (or refused it for good). */
  dropReport(report: ReportBody): void {
    if (this.state.outbox[0] !== report) return;
    this.save({ ...this.state, outbox: this.state.outbox.slice(1) });
  }
}
