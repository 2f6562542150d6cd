import type { CommandCancel, DeliveredCommand, ReceivedHeartbeat } from '@svc/protocol';
import type { LegacyPrincipal, LicensePrincipal } from '../auth/principal.ts';

/** What may send a heartbeat: a license key or the legacy key. */
export type KeyHolder = LicensePrincipal | LegacyPrincipal;

/**
 * A recorded heartbeat: the commands handed out, the running ones to stop, and the agent's client
 * with its portal schedules revision (null after the slow path: the next heartbeat brings the schedules).
 */
export interface HeartbeatAnswer {
  receivedAt: Date;
  commands: DeliveredCommand[];
  cancel: CommandCancel[];
  schedules: { clientId: string; revision: number } | null;
}

/** AppContext.heartbeats: records a heartbeat and claims its commands (agents/heartbeat-batch.ts). */
export interface HeartbeatWriter {
  record(principal: KeyHolder, hb: ReceivedHeartbeat): Promise<HeartbeatAnswer>;
}
