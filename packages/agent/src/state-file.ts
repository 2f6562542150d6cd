import fs from 'node:fs';
import path from 'node:path';
import type { HeartbeatSchedule } from '@svc/protocol';
import { replaceFileSync } from '@svc/protocol/node';

/** What `svcd status` shows: the daemon rewrites it after every heartbeat cycle. */
export interface DaemonState {
  agent_id: string;
  pid: number;
  portal: string;
  config_dir: string;
  tier: string;
  log_level: string;
  started_at: string;
  last_heartbeat: string | null;
  last_heartbeat_ok: boolean | null;
  last_error: string | null;
  schedules: HeartbeatSchedule[];
}

export const stateFilePath = (stateDir: string): string => path.join(stateDir, 'status.json');

/**
 * Replaced whole and durably: a reader never sees half a file, and after a power cut `svcd status`
 * reads the last cycle's state, never an empty file (two fsyncs a heartbeat, every 5 minutes).
 */
export function writeState(stateDir: string, state: DaemonState): void {
  replaceFileSync(stateFilePath(stateDir), `${JSON.stringify(state, null, 2)}\n`, { durable: true, mode: 0o600 });
}

export function readState(stateDir: string): DaemonState | null {
  try {
    return JSON.parse(fs.readFileSync(stateFilePath(stateDir), 'utf8')) as DaemonState;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
