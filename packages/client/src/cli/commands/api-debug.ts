import fs from 'node:fs';
import path from 'node:path';
import { Option, type Command } from 'commander';
import { REPORTABLE_STATUSES } from '@svc/protocol';
import { jsonOf, textOf, toCurl, type HttpResponse, type RequestSpec } from '../../kit/http/request.ts';
import {
  benchmarkRequest,
  commandStatusRequest,
  downloadRequest,
  healthRequest,
  heartbeatRequest,
  refreshRequest,
  sessionsRequest,
  shareRequest,
  uploadRequest,
} from '../../kit/portal/requests.ts';
import type { PortalTarget } from '../../kit/portal/target.ts';
import { createPortalClient } from '../../kit/portal/client.ts';
import type { CliContext } from '../context.ts';
import { configOption, targetOf, targetOptions, type CommonOpts } from '../options.ts';
import { CliError, Output, usageError } from '../output.ts';
import { CLIENT_VERSION } from '../../kit/version.ts';

/**
 * `svc api-debug` (tools/api_debug.sh): call one portal endpoint and show the exchange.
 *
 * The global options live on `api-debug` only. Commander lets a command recognise its own
 * options anywhere on the line (positional options are not enabled), so `-u URL health` and
 * `health -u URL` both reach them; each subcommand reads them with optsWithGlobals().
 *
 * Every call is described once as a RequestSpec (kit/portal/requests.ts) and then sent, or shown
 * as curl (`--show-curl`, `--show-curl-only`) with the credentials masked by toCurl.
 */

interface GlobalOpts extends CommonOpts {
  quiet?: boolean;
  showCurl?: boolean;
  showCurlOnly?: boolean;
}

/** How a subcommand's answer is shown. */
interface Presentation {
  /** download: a 2xx body is written as is (to stdout or -o), never reformatted. */
  raw?: boolean;
  /** download -o: where a 2xx body goes. */
  outputFile?: string | undefined;
}

const SUBCOMMANDS = [
  'health',
  'upload',
  'download',
  'share',
  'refresh',
  'benchmark',
  'heartbeat',
  'command-status',
  'sessions',
];

function requireFile(file: string, option: string): string {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  if (stat === undefined) throw usageError(`${option}: no such file: ${file}`);
  if (!stat.isFile()) throw usageError(`${option}: not a regular file: ${file}`);
  return path.resolve(file);
}

function integerOf(raw: string, option: string, opts: { min?: number } = {}): number {
  const n = Number(raw.trim());
  if (!/^-?\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || (opts.min !== undefined && n < opts.min)) {
    throw usageError(
      `${option} must be a whole number${opts.min !== undefined ? ` of at least ${opts.min}` : ''} (got "${raw}")`,
    );
  }
  return n;
}

/** `--json <payload>`: sent verbatim, but it has to be JSON. */
function jsonPayload(raw: string): string {
  try {
    JSON.parse(raw);
  } catch (err) {
    throw usageError(`--json is not valid JSON: ${(err as Error).message}`);
  }
  return raw;
}

/** `--json` replaces the field options; giving both is ambiguous. */
function exclusiveJson(json: string | undefined, fields: Record<string, unknown>): void {
  if (json === undefined) return;
  const given = Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k]) => k);
  if (given.length > 0) throw usageError(`--json cannot be combined with ${given.join(', ')}`);
}

function requireFields(fields: Record<string, unknown>, alternative: string): void {
  const missing = Object.entries(fields)
    .filter(([, v]) => v === undefined)
    .map(([k]) => k);
  if (missing.length > 0)
    throw usageError(`missing ${missing.join(', ')} (or give the whole body with ${alternative})`);
}

/** The body as it is shown: pretty JSON when it is JSON, else the text with a final newline. */
function showBody(out: Output, res: HttpResponse): void {
  if (res.body.length === 0) return;
  const json = jsonOf(res);
  if (json !== undefined) {
    out.json(json);
    return;
  }
  const text = textOf(res);
  out.write(text.endsWith('\n') ? text : `${text}\n`);
}

/** One line saying why a non-2xx answer failed: the portal's `error` string when it sent one. */
function reasonOf(res: HttpResponse): string {
  const json = jsonOf(res) as { error?: unknown; message?: unknown } | undefined;
  if (json !== null && typeof json === 'object') {
    if (typeof json.error === 'string') return json.error;
    if (typeof json.message === 'string') return json.message;
  }
  const text = textOf(res).replace(/\s+/g, ' ').trim();
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

async function execute(
  ctx: CliContext,
  g: GlobalOpts,
  build: (target: PortalTarget) => RequestSpec,
  how: Presentation = {},
): Promise<void> {
  const out = new Output(ctx.streams, { quiet: g.quiet === true });
  const target = targetOf(g, ctx);
  const spec = build(target);
  const curl = () => toCurl(spec, { timeoutS: target.timeoutS, output: how.outputFile });
  if (g.showCurlOnly) {
    out.print(curl());
    return;
  }
  // Asked for explicitly, so shown even with --quiet.
  if (g.showCurl) ctx.streams.stderr.write(`${curl()}\n`);
  // The typed client's raw exchange: the exact description shown above is what is sent.
  const res = await createPortalClient({ target }).exchange(spec);
  const ok = res.status >= 200 && res.status < 300;
  const status = `HTTP ${res.status}`;
  out.info(`${spec.method} ${spec.url} -> ${ok ? out.err.green(status) : out.err.red(status)} in ${res.ms} ms`);
  if (!ok) {
    showBody(out, res);
    throw new CliError(`HTTP ${res.status}: ${reasonOf(res) || 'no body'}`, 'portal');
  }
  if (how.outputFile !== undefined) {
    try {
      fs.writeFileSync(how.outputFile, res.body);
    } catch (err) {
      throw new CliError(
        `Cannot write ${how.outputFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
    }
    out.info(`wrote ${res.body.length} bytes to ${how.outputFile}`);
    return;
  }
  if (how.raw) {
    // Bytes as they are into a pipe or file; a terminal gets them as printable text.
    if (ctx.streams.stdout.isTTY === true) out.write(res.body.toString('utf8'));
    else ctx.streams.stdout.write(res.body);
    return;
  }
  showBody(out, res);
}

export default function register(program: Command, ctx: CliContext): void {
  const api = program
    .command('api-debug')
    .description('call one portal endpoint and show the exchange (optionally as an equivalent curl command)')
    .option('--quiet', 'no status line on stderr')
    .option('--show-curl', 'print the equivalent curl command (secrets masked) on stderr, then send')
    .option('--show-curl-only', 'print the equivalent curl command (secrets masked) on stdout and send nothing');
  configOption(api);
  targetOptions(api);
  // With no subcommand, or an unknown one: a usage error (exit 2), not commander's help exit.
  api.allowExcessArguments().action((_opts: unknown, cmd: Command) => {
    const [first] = cmd.args;
    if (first !== undefined)
      throw usageError(`unknown api-debug subcommand '${first}' (one of: ${SUBCOMMANDS.join(', ')})`);
    cmd.outputHelp({ error: true });
    throw usageError(`a subcommand is required (one of: ${SUBCOMMANDS.join(', ')})`);
  });
  api.addHelpText(
    'after',
    [
      '',
      'Global options may be given before or after the subcommand.',
      'The response body goes to stdout (pretty-printed when JSON); "METHOD URL -> HTTP <status> in <ms> ms" goes to stderr unless --quiet.',
      'The curl output masks x-api-key (only the svc_<tier>_ prefix is kept) and X-Identity-Token.',
      'Exit codes: 0 the portal answered 2xx (or --show-curl-only); 1 it answered otherwise or could not be reached; 2 usage error.',
    ].join('\n'),
  );

  const sub = (name: string, description: string) => {
    // The help lists the global options too: they may be given after the subcommand as well.
    return api.command(name).description(description).configureHelp({ showGlobalOptions: true });
  };
  const globals = (cmd: Command) => cmd.optsWithGlobals<GlobalOpts>();

  sub('health', 'GET /api/health (public); with --agents, GET /api/health?agents=true (needs a JWT)')
    .option('--agents', 'list the registered agents (needs -j or SVC_JWT)')
    .action(async (opts: { agents?: boolean }, cmd: Command) => {
      await execute(ctx, globals(cmd), (t) => healthRequest(t, { agents: opts.agents === true }));
    });

  sub('upload', 'POST /api/upload: a session JSON with the optional log and reports (needs a key)')
    .requiredOption('-s, --session <json>', 'session_results.json to upload')
    .option('-l, --log <file>', 'pipeline log (pipeline_log)')
    .option('-r, --report <file>', 'HTML report (report_html)')
    .option('-e, --exec <file>', 'executive summary HTML (exec_summary_html)')
    .action(async (opts: { session: string; log?: string; report?: string; exec?: string }, cmd: Command) => {
      const files = {
        session: requireFile(opts.session, '-s'),
        log: opts.log === undefined ? undefined : requireFile(opts.log, '-l'),
        report: opts.report === undefined ? undefined : requireFile(opts.report, '-r'),
        exec: opts.exec === undefined ? undefined : requireFile(opts.exec, '-e'),
      };
      await execute(ctx, globals(cmd), (t) => uploadRequest(t, files));
    });

  sub('download', 'GET /api/download: one stored file of a session (with the key, or the JWT when there is no key)')
    .requiredOption('-s, --session <session_id>', 'session id')
    .option('-f, --file <name>', 'session_results.json (default), pipeline.log, report.html or exec_summary.html')
    .option('-o, --output <file>', 'write the body to this file instead of stdout')
    .action(async (opts: { session: string; file?: string; output?: string }, cmd: Command) => {
      await execute(ctx, globals(cmd), (t) => downloadRequest(t, opts.session, opts.file), {
        raw: true,
        outputFile: opts.output,
      });
    });

  sub('share', 'GET /api/share?token=: the session a share token points to (no credential)')
    .requiredOption('-t, --token <token>', 'share token (64 hex)')
    .action(async (opts: { token: string }, cmd: Command) => {
      await execute(ctx, globals(cmd), (t) => shareRequest(t, opts.token));
    });

  sub('refresh', 'PUT /api/refresh: replace one display file of a session (needs a key)')
    .requiredOption('-s, --session <id>', 'session id')
    .requiredOption('-f, --file <name>', 'report.html or exec_summary.html')
    .requiredOption('-i, --input <file>', 'the new HTML')
    .action(async (opts: { session: string; file: string; input: string }, cmd: Command) => {
      const input = requireFile(opts.input, '-i');
      await execute(ctx, globals(cmd), (t) => refreshRequest(t, opts.session, opts.file, input));
    });

  sub('benchmark', 'GET /api/benchmark: how a session compares with others (business or msp key, or a JWT)')
    .requiredOption('-s, --session <id>', 'session id')
    .action(async (opts: { session: string }, cmd: Command) => {
      await execute(ctx, globals(cmd), (t) => benchmarkRequest(t, opts.session));
    });

  sub(
    'heartbeat',
    'POST /api/health: send a daemon heartbeat (needs a key); answers the queued commands, which become sent',
  )
    .option('--agent-id <id>', 'agent id')
    .option('--status <s>', 'agent status (the daemon sends running)')
    .option('--uptime <sec>', 'uptime_seconds to report (the debug tool sends 0)')
    .option('--client-id <id>', 'optional client_id field')
    .option('--json <payload>', 'send this JSON body verbatim instead of building one')
    .addHelpText(
      'after',
      "\nThe built body: agent_id, version (this client's), timestamp (now), status, uptime_seconds (0 unless --uptime), client_id when given.",
    )
    .action(
      async (
        opts: { agentId?: string; status?: string; uptime?: string; clientId?: string; json?: string },
        cmd: Command,
      ) => {
        const fields = {
          '--agent-id': opts.agentId,
          '--status': opts.status,
          '--uptime': opts.uptime,
          '--client-id': opts.clientId,
        };
        let payload: string;
        if (opts.json !== undefined) {
          exclusiveJson(opts.json, fields);
          payload = jsonPayload(opts.json);
        } else {
          requireFields({ '--agent-id': opts.agentId, '--status': opts.status }, '--json');
          const body: Record<string, unknown> = {
            agent_id: opts.agentId,
            version: CLIENT_VERSION,
            timestamp: ctx.now().toISOString(),
            status: opts.status,
            uptime_seconds: opts.uptime === undefined ? 0 : integerOf(opts.uptime, '--uptime', { min: 0 }),
          };
          if (opts.clientId !== undefined) body['client_id'] = opts.clientId;
          payload = JSON.stringify(body);
        }
        await execute(ctx, globals(cmd), (t) => heartbeatRequest(t, payload));
      },
    );

  sub(
    'command-status',
    'PATCH /api/agent-commands: report a command acked, completed or failed as its agent (needs a key)',
  )
    .option('--command-id <id>', 'command id (integer)')
    .option('--agent-id <id>', 'the agent the command was queued for')
    .addOption(new Option('--status <s>', 'new status').choices(REPORTABLE_STATUSES))
    .option('--exit-code <n>', 'exit_code (integer), for completed or failed')
    .option('--stdout <text>', 'captured stdout')
    .option('--stderr <text>', 'captured stderr')
    .option('--session-id <id>', 'session_id (run_scan, push_session)')
    .option('--json <payload>', 'send this JSON body verbatim instead of building one')
    .action(
      async (
        opts: {
          commandId?: string;
          agentId?: string;
          status?: string;
          exitCode?: string;
          stdout?: string;
          stderr?: string;
          sessionId?: string;
          json?: string;
        },
        cmd: Command,
      ) => {
        let payload: string;
        if (opts.json !== undefined) {
          exclusiveJson(opts.json, {
            '--command-id': opts.commandId,
            '--agent-id': opts.agentId,
            '--status': opts.status,
            '--exit-code': opts.exitCode,
            '--stdout': opts.stdout,
            '--stderr': opts.stderr,
            '--session-id': opts.sessionId,
          });
          payload = jsonPayload(opts.json);
        } else {
          requireFields(
            { '--command-id': opts.commandId, '--agent-id': opts.agentId, '--status': opts.status },
            '--json',
          );
          const body: Record<string, unknown> = {
            command_id: integerOf(opts.commandId as string, '--command-id', { min: 1 }),
            agent_id: opts.agentId,
            status: opts.status,
          };
          if (opts.exitCode !== undefined) body['exit_code'] = integerOf(opts.exitCode, '--exit-code');
          if (opts.stdout !== undefined) body['stdout'] = opts.stdout;
          if (opts.stderr !== undefined) body['stderr'] = opts.stderr;
          if (opts.sessionId !== undefined) body['session_id'] = opts.sessionId;
          payload = JSON.stringify(body);
        }
        await execute(ctx, globals(cmd), (t) => commandStatusRequest(t, payload));
      },
    );

  sub('sessions', 'GET /api/sessions: list the sessions, or one with -s (needs a JWT: -j or SVC_JWT)')
    .option('-s, --session <id>', 'show this one session (with status history and notes)')
    .action(async (opts: { session?: string }, cmd: Command) => {
      await execute(ctx, globals(cmd), (t) => sessionsRequest(t, { session: opts.session }));
    });
}
