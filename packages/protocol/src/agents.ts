import { Type, type Static, type TSchema } from '@sinclair/typebox';
import {
  CommandCancel,
  COMMAND_EXPIRY_DEFAULT_SECONDS,
  COMMAND_EXPIRY_MAX_SECONDS,
  COMMAND_EXPIRY_MIN_SECONDS,
} from './command-lifecycle.ts';
import { CommandProgress, CommandProgressView } from './command-progress.ts';
import { COMMAND_STATUSES, REPORTABLE_STATUSES } from './command-status.ts';
import { CLIENT_ID_RULES, IsoDateTime } from './common.ts';
import { PortalSchedulesAnswer } from './schedule-delivery.ts';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** Agent ids: `svcd_<8 hex>` by default, overridable (SVC_AGENT_ID); kept to a safe alphabet. */
export const AGENT_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$';
export const AgentId = Type.String({ pattern: AGENT_ID_PATTERN, maxLength: 128 });
export const GROUP_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$';
export const GroupName = Type.String({ pattern: GROUP_NAME_PATTERN, maxLength: 64 });
/** Agents are (client_id, agent_id): an admin naming an id that exists under several clients names the client. */
export const AgentClientId = Type.Optional(
  Nullable(
    Type.String({
      ...CLIENT_ID_RULES,
      description:
        "The client of the agent: required when agent_id exists under several clients (else 409 listing them); null names the legacy key's agents without a client",
    }),
  ),
);

export const MAX_COMMANDS_PER_HEARTBEAT = 20;
export const MAX_COMMANDS_PER_POLL = 50;
export const STALE_THRESHOLD_SECONDS = 600;
/** Captured output cap per stream (10 KB each). */
export const MAX_OUTPUT_BYTES = 10 * 1024;

export const COMMAND_TYPES = [
  'run_scan',
  'update_schedule',
  'push_config',
  'push_session',
  'restart',
  'shutdown',
  'update',
  'set_log_level',
] as const;
export type CommandType = (typeof COMMAND_TYPES)[number];

/** The only keys push_config may change remotely. */
export const REMOTE_CONFIG_ALLOWLIST = [
  'DAEMON_POLL_INTERVAL',
  'DAEMON_HEARTBEAT_INTERVAL',
  'DAEMON_SCAN_RETRY_MAX',
  'DAEMON_SCAN_RETRY_BACKOFF',
  'DAEMON_LOG_LEVEL',
  'ALERT_ENABLED',
  'ALERT_RISK_THRESHOLD',
  'ALERT_ON_NEW_CRITICAL',
  // Our addition to the contract's eight: a fleet's scans outgrow the 4-hour default
  // (docs/decisions.md#remote-configuration-values-have-a-rule-per-key).
  'SVC_SCAN_TIMEOUT',
] as const;
export const AGENT_LOG_LEVELS = ['debug', 'info', 'warning', 'error'] as const;
export type AgentLogLevel = (typeof AGENT_LOG_LEVELS)[number];
export const SCHEDULE_ACTIONS = ['update', 'create', 'delete'] as const;
export const CONFIG_KEY_NOT_ALLOWED = 'Config key not in remote-update allowlist';

/** A command as the agent receives it (heartbeat answer and poll). */
export const DeliveredCommand = Type.Object({
  id: Type.Integer(),
  command_type: Type.Union(COMMAND_TYPES.map((t) => Type.Literal(t))),
  payload: Type.Record(Type.String(), Type.Unknown()),
  priority: Type.Integer(),
  created_by: Type.String(),
  created_at: IsoDateTime,
});
export type DeliveredCommand = Static<typeof DeliveredCommand>;

export const HeartbeatResponse = Type.Object({
  success: Type.Literal(true),
  received_at: IsoDateTime,
  commands: Type.Array(DeliveredCommand),
  cancel: Type.Optional(
    Type.Array(CommandCancel, {
      description:
        'Running (acked) commands of this agent an admin cancelled: the agent stops each and reports it failed. Present only when there is one',
    }),
  ),
  portal_schedules: Type.Optional(PortalSchedulesAnswer),
});
export type HeartbeatResponse = Static<typeof HeartbeatResponse>;

/** A command an agent runs now (acked, not finished), as the fleet listing shows it. */
export const RunningCommand = Type.Object({
  id: Type.Integer(),
  command_type: Type.Union(COMMAND_TYPES.map((t) => Type.Literal(t))),
  acked_at: IsoDateTime,
  progress: Nullable(CommandProgressView),
});
export type RunningCommand = Static<typeof RunningCommand>;

/** GET /api/health?agents=true item: the stored heartbeat plus computed staleness. */
export const AgentView = Type.Object({
  agent_id: Type.String(),
  version: Type.String(),
  timestamp: IsoDateTime,
  status: Type.String(),
  uptime_seconds: Type.Number(),
  client_id: Nullable(Type.String()),
  schedules: Nullable(Type.Array(Type.Unknown())),
  system_info: Nullable(Type.Record(Type.String(), Type.Unknown())),
  received_at: IsoDateTime,
  first_seen_at: IsoDateTime,
  deregistered_at: Nullable(IsoDateTime),
  is_stale: Type.Boolean(),
  age_seconds: Type.Number(),
  hostname: Nullable(Type.String({ description: "system_info.hostname of the agent's latest heartbeat" })),
  ip_addresses: Type.Array(Type.String(), {
    description: "system_info.ip_addresses of the agent's latest heartbeat (empty when not reported)",
  }),
  running: Type.Array(RunningCommand, {
    description: 'The commands the agent runs now (acked), oldest first, each with its latest progress',
  }),
});
export type AgentView = Static<typeof AgentView>;

/** An agent's state on the fleet page and in the listing's `state` filter. */
export const AGENT_STATES = ['online', 'stale', 'deregistered'] as const;
export type AgentState = (typeof AGENT_STATES)[number];

/**
 * The fleet search (`q` on GET /api/health?agents=true, the Fleet page and the Commands
 * form's agent picker): what a host name, an address or an agent id can hold, so a `%` or a
 * space is a 400 rather than a pattern. One term matches a host name anywhere in it (any
 * case), an address exactly when the term is a whole address and by prefix otherwise, and an
 * agent id by prefix (any case).
 */
export const AGENT_SEARCH_MAX_LENGTH = 128;
export const AGENT_SEARCH_PATTERN = '^[A-Za-z0-9_.:-]+$';
const AGENT_SEARCH_RE = new RegExp(AGENT_SEARCH_PATTERN);
export const AGENT_SEARCH_RULE = `1 to ${AGENT_SEARCH_MAX_LENGTH} letters, digits, '.', ':', '_' or '-'`;

/** Why a fleet search term would be refused (the portal's 400), or null when it is fine. */
export function agentSearchProblem(q: string): string | null {
  return q.length <= AGENT_SEARCH_MAX_LENGTH && AGENT_SEARCH_RE.test(q) ? null : `Search must be ${AGENT_SEARCH_RULE}`;
}

export const AgentsQuery = Type.Object(
  {
    agents: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, default: 1000 })),
    cursor: Type.Optional(AgentId),
    state: Type.Optional(
      Type.Union(
        AGENT_STATES.map((s) => Type.Literal(s)),
        { description: 'Only agents in this state; without it, the registered agents (online and stale)' },
      ),
    ),
    client_id: Type.Optional(Type.String({ ...CLIENT_ID_RULES, description: "Only this client's agents" })),
    group: Type.Optional(
      Type.String({ pattern: GROUP_NAME_PATTERN, maxLength: 64, description: 'Only members of this group' }),
    ),
    version: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'Only agents reporting this version' }),
    ),
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: AGENT_SEARCH_MAX_LENGTH,
        pattern: AGENT_SEARCH_PATTERN,
        description:
          'Search: agents whose host name contains it (any case), with an address equal to it when it is a whole IPv4 or IPv6 address and starting with it otherwise, or whose agent id starts with it (any case)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type AgentsQuery = Static<typeof AgentsQuery>;

export const AgentCounts = Type.Object(
  {
    online: Type.Integer(),
    stale: Type.Integer(),
    deregistered: Type.Integer(),
  },
  { description: 'Agents per state matching client_id, group, version and q (whatever the state filter and page)' },
);
export type AgentCounts = Static<typeof AgentCounts>;

export const AgentListResponse = Type.Object({
  agents: Type.Array(AgentView),
  stale_threshold_seconds: Type.Integer(),
  next_cursor: Nullable(Type.String({ description: 'agent_id to pass as cursor for the next page' })),
  counts: AgentCounts,
});
export type AgentListResponse = Static<typeof AgentListResponse>;

export const AGENT_ACTIONS = ['deregister', 'reenable', 'purge'] as const;
export const AgentActionBody = Type.Object(
  { agent_id: AgentId, client_id: AgentClientId, action: Type.Union(AGENT_ACTIONS.map((a) => Type.Literal(a))) },
  { additionalProperties: false },
);

export const QueueCommandBody = Type.Object(
  {
    command_type: Type.String(),
    agent_id: Type.Optional(AgentId),
    group_target: Type.Optional(GroupName),
    client_id: Type.Optional(
      Nullable(
        Type.String({
          ...CLIENT_ID_RULES,
          description:
            "With agent_id: the agent's client, required when the id exists under several clients (else 409). With group_target: the client whose group is meant; a group name that exists under several clients needs it (else 409), or all_clients",
        }),
      ),
    ),
    all_clients: Type.Optional(
      Type.Boolean({
        description: 'With group_target: broadcast to the group under every client that has it (groups are per client)',
      }),
    ),
    payload: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    priority: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, default: 5 })),
    expires_in_seconds: Type.Optional(
      Type.Integer({
        minimum: COMMAND_EXPIRY_MIN_SECONDS,
        maximum: COMMAND_EXPIRY_MAX_SECONDS,
        description: `Seconds from now until the command expires if its agent has not started it (default ${COMMAND_EXPIRY_DEFAULT_SECONDS}, 24 h): it is then failed as expired and never delivered`,
      }),
    ),
  },
  { additionalProperties: false },
);
export type QueueCommandBody = Static<typeof QueueCommandBody>;

export const QueuedCommand = Type.Object({
  id: Type.Integer(),
  agent_id: Type.String(),
  command_type: Type.String(),
  status: Type.Literal('pending'),
  created_at: IsoDateTime,
  expires_at: IsoDateTime,
});
export const QueueCommandResponse = Type.Object({
  success: Type.Literal(true),
  commands: Type.Array(QueuedCommand),
  skipped: Type.Optional(Type.Array(Type.Object({ agent_id: Type.String(), reason: Type.String() }))),
});
export type QueueCommandResponse = Static<typeof QueueCommandResponse>;

export const CommandRecord = Type.Object({
  id: Type.Integer(),
  agent_id: Type.String(),
  agent_hostname: Nullable(
    Type.String({
      description: "system_info.hostname of the agent's latest heartbeat (null: not reported, or purged)",
    }),
  ),
  client_id: Nullable(Type.String({ description: "The agent's client (agents are (client_id, agent_id))" })),
  command_type: Type.String(),
  payload: Type.Record(Type.String(), Type.Unknown()),
  priority: Type.Integer(),
  created_by: Type.String(),
  group_target: Nullable(Type.String()),
  status: Type.Union(COMMAND_STATUSES.map((s) => Type.Literal(s))),
  created_at: IsoDateTime,
  sent_at: Nullable(IsoDateTime),
  acked_at: Nullable(IsoDateTime),
  completed_at: Nullable(IsoDateTime),
  progress: Nullable({
    ...CommandProgressView,
    description:
      "The agent's latest progress report while the command runs (run_scan: nmap's task and percent); null when none came",
  }),
  expires_at: IsoDateTime,
  cancel_requested: Nullable(
    Type.Object(
      { at: IsoDateTime, by: Type.String(), reason: Nullable(Type.String()) },
      {
        description:
          'A cancellation of this running command, asked by an admin and not yet confirmed by its agent (it stays once the command ended)',
      },
    ),
  ),
});
export type CommandRecord = Static<typeof CommandRecord>;

export const CommandResult = Type.Object({
  exit_code: Nullable(Type.Integer()),
  stdout: Type.String(),
  stderr: Type.String(),
  session_id: Nullable(Type.String()),
  session_url: Nullable(
    Type.String({ description: "/collect/?session=<id>&client_id=<the command's client> when session_id is set" }),
  ),
  completed_at: IsoDateTime,
});

export const CommandsQuery = Type.Object(
  {
    agent_id: Type.Optional(AgentId),
    command_id: Type.Optional(Type.Integer({ minimum: 1 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
    status: Type.Optional(Type.Union(COMMAND_STATUSES.map((s) => Type.Literal(s)))),
  },
  { additionalProperties: false },
);

export const PollResponse = Type.Object({
  commands: Type.Array(Type.Intersect([DeliveredCommand, Type.Object({ group_target: Nullable(Type.String()) })])),
  cancel: Type.Optional(
    Type.Array(CommandCancel, {
      description:
        'Running (acked) commands of this agent an admin cancelled: the agent stops each and reports it failed. Present only when there is one',
    }),
  ),
});
export const CommandListResponse = Type.Object({ commands: Type.Array(CommandRecord) });
export const CommandDetailResponse = Type.Object({ command: CommandRecord, result: Nullable(CommandResult) });
/** POST /api/agent-commands/cancel's answer: the command as it is now, with its result once it ended. */
export const CancelCommandResponse = Type.Object({
  success: Type.Literal(true),
  command: CommandRecord,
  result: Nullable(CommandResult),
});

export const StatusReportBody = Type.Object(
  {
    command_id: Type.Integer({ minimum: 1 }),
    agent_id: AgentId,
    status: Type.Union(REPORTABLE_STATUSES.map((s) => Type.Literal(s))),
    exit_code: Type.Optional(Nullable(Type.Integer({ minimum: -2147483648, maximum: 2147483647 }))),
    stdout: Type.Optional(Nullable(Type.String({ maxLength: 1_000_000 }))),
    stderr: Type.Optional(Nullable(Type.String({ maxLength: 1_000_000 }))),
    session_id: Type.Optional(Nullable(Type.String({ maxLength: 128 }))),
    progress: Type.Optional({
      ...CommandProgress,
      description:
        'A progress report: with status `acked`, for a command that is acked already. Stores the progress and its time, nothing else',
    }),
  },
  { additionalProperties: false },
);
export type StatusReportBody = Static<typeof StatusReportBody>;
export const StatusReportResponse = Type.Object({
  success: Type.Literal(true),
  command_id: Type.Integer(),
  status: Type.Union(REPORTABLE_STATUSES.map((s) => Type.Literal(s))),
});

export const GroupMember = Type.Object({
  agent_id: Type.String(),
  client_id: Nullable(Type.String({ description: 'Groups are per client: the client whose group this member is in' })),
  created_at: IsoDateTime,
});
/** POST /api/agent-groups' answer. */
export const GroupMemberAdded = Type.Object({
  success: Type.Literal(true),
  group_name: Type.String(),
  agent_id: Type.String(),
  client_id: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
});
export type GroupMemberAdded = Static<typeof GroupMemberAdded>;
export const GroupsResponse = Type.Object({ groups: Type.Record(Type.String(), Type.Array(GroupMember)) });
export const GroupMemberBody = Type.Object(
  { agent_id: AgentId, group_name: GroupName, client_id: AgentClientId },
  { additionalProperties: false },
);
export const GroupMemberQuery = Type.Object(
  {
    agent_id: AgentId,
    group_name: GroupName,
    client_id: Type.Optional(
      Type.String({
        ...CLIENT_ID_RULES,
        description: "The agent's client: required when agent_id exists under several clients (else 409)",
      }),
    ),
  },
  { additionalProperties: false },
);
