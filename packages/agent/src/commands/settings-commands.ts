import type { CommandPayloads } from '@svc/protocol';
import type { CommandHost } from '../types.ts';
import { done, failure, type Outcome } from './outcome.ts';

/** update_schedule, push_config and set_log_level: changes to the daemon's own state, through the host. */

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

export function updateSchedule(payload: CommandPayloads['update_schedule'], host: CommandHost): Outcome {
  const action = payload.action ?? 'update';
  // schedule_id must match a loaded schedule (create included: it changes a loaded one's entry).
  if (!host.schedules.has(payload.schedule_id))
    return failure(`update_schedule: no loaded schedule ${payload.schedule_id}`);
  try {
    const said = host.schedules.apply(payload.schedule_id, action, {
      cron: payload.cron,
      profile: payload.profile,
      targets: payload.targets,
    });
    return done(`${said}\n`);
  } catch (err) {
    return failure(`update_schedule: ${messageOf(err)}`);
  }
}

export function pushConfig(payload: CommandPayloads['push_config'], host: CommandHost): Outcome {
  try {
    host.applyConfig(payload.config_key, payload.config_value);
  } catch (err) {
    return failure(`push_config: ${messageOf(err)}`);
  }
  return done(`${payload.config_key}=${payload.config_value} applied\n`);
}

export function setLogLevel(payload: CommandPayloads['set_log_level'], host: CommandHost): Outcome {
  host.setLogLevel(payload.level);
  return done(`log level ${payload.level}\n`);
}
