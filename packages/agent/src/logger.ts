import { AGENT_LOG_LEVELS, type AgentLogLevel } from '@svc/protocol';
import pc from 'picocolors';
import { printableJson } from '@svc/client/kit';
import type { AgentLogger } from './types.ts';

const RANK: Record<AgentLogLevel, number> = { debug: 0, info: 1, warning: 2, error: 3 };
// Colors forced on: whether to paint at all is this module's decision, not picocolors'.
const paint = pc.createColors(true);
const PAINT: Record<AgentLogLevel, (s: string) => string> = {
  debug: paint.gray,
  info: paint.cyan,
  warning: paint.yellow,
  error: paint.red,
};

export function isLogLevel(value: unknown): value is AgentLogLevel {
  return typeof value === 'string' && (AGENT_LOG_LEVELS as readonly string[]).includes(value);
}

/**
 * logfmt: bare when safe, JSON-quoted otherwise (so a value can never start a new log line),
 * with DEL and C1 escaped too (JSON.stringify leaves them raw; a terminal acts on 0x9b).
 */
function fieldText(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return /^[^\s"=\p{Cc}\u2028\u2029]+$/u.test(text ?? '') ? (text as string) : printableJson(text ?? null);
}

export interface DaemonLogger extends AgentLogger {
  level: AgentLogLevel;
}

/**
 * One logfmt line per event (`ts= level= msg= key=value...`) on the given stream, dropped below
 * the live level. Color only on an interactive terminal with NO_COLOR unset (docs/agent.md).
 */
export function createLogger(
  out: NodeJS.WritableStream & { isTTY?: boolean },
  env: NodeJS.ProcessEnv,
  level: AgentLogLevel,
): DaemonLogger {
  const color = out.isTTY === true && (env['NO_COLOR'] === undefined || env['NO_COLOR'] === '');
  const log = (at: AgentLogLevel, message: string, fields: Record<string, unknown> = {}) => {
    if (RANK[at] < RANK[logger.level]) return;
    const parts = [
      `ts=${new Date().toISOString()}`,
      `level=${color ? PAINT[at](at) : at}`,
      `msg=${fieldText(message)}`,
    ];
    for (const [k, v] of Object.entries(fields)) if (v !== undefined) parts.push(`${k}=${fieldText(v)}`);
    out.write(`${parts.join(' ')}\n`);
  };
  const logger: DaemonLogger = {
    level,
    debug: (m, f) => log('debug', m, f),
    info: (m, f) => log('info', m, f),
    warning: (m, f) => log('warning', m, f),
    error: (m, f) => log('error', m, f),
  };
  return logger;
}
