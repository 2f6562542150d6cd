import { printable, printableJson } from '@svc/client/kit';
import { readState, stateFilePath } from './state-file.ts';
import { processAlive } from '@svc/protocol/node';

/** `svcd status`: the state file the daemon writes each cycle, as text or JSON. Exit 1 when it never ran. */
export function formatStatus(stateDir: string, json: boolean): { text: string; code: number } {
  const state = readState(stateDir);
  if (state === null) return { text: `svcd has not run yet (no ${stateFilePath(stateDir)})\n`, code: 1 };
  const running = processAlive(state.pid);
  if (json) return { text: `${printableJson({ ...state, running })}\n`, code: 0 };
  const lines = [
    `Agent id:        ${state.agent_id}`,
    `Daemon:          ${running ? `running (pid ${state.pid})` : `not running (last pid ${state.pid})`}`,
    `Portal:          ${state.portal}`,
    `Tier:            ${state.tier}`,
    `Configs:         ${state.config_dir}`,
    `Log level:       ${state.log_level}`,
    `Started:         ${state.started_at}`,
    `Last heartbeat:  ${state.last_heartbeat ?? 'never'}${
      state.last_heartbeat_ok === false ? ` (failed: ${state.last_error ?? 'unknown'})` : ''
    }`,
    `Schedules:       ${state.schedules.length === 0 ? 'none' : ''}`,
    ...state.schedules.map(
      (s) =>
        `  ${s.schedule_id} ${s.config}: last ${s.last_run ?? 'never'} (${s.last_status}), next ${s.next_run}, retries ${s.retry_count}`,
    ),
  ];
  // The last error may be the portal's words: nothing in it may act on the terminal.
  return { text: `${printable(lines.join('\n'))}\n`, code: 0 };
}
