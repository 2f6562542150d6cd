import { StatusReportBody, StatusReportResponse } from '@svc/protocol';
import { reportCommandStatus } from '../../agents/status-report.ts';
import { keyHolderOf, requireKey } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';

/** PATCH /api/agent-commands: an agent reports acked, completed or failed, or a running command's progress (docs/api.md#agents-and-commands). */
export default function register(app: App, ctx: AppContext): void {
  app.patch(
    '/agent-commands',
    {
      // Command output is whatever the command printed; status-report.ts strips what cannot be stored.
      config: { keepUnstorableStrings: true },
      onRequest: requireKey(ctx, { permission: 'agent:commands' }),
      schema: {
        operationId: 'reportAgentCommandStatus',
        tags: ['agents'],
        summary: 'Agent status report (or progress report) for one of its commands',
        description:
          "Only for an agent of the key's own client (the legacy key: only agents it registered); any other agent is answered as a missing one (404). session_id (run_scan, push_session) must name a stored session of the agent's client, else 400 and nothing is stored. " +
          'A progress report is status `acked` with a `progress` object for a command that is acked already: it stores the progress and its time and changes nothing else (no audit event, no webhook); for a command in any other status it is a 409, and a malformed progress a 400 naming the field.',
        security: [{ apiKey: [] }],
        body: StatusReportBody,
        response: responses({ 200: StatusReportResponse }, 400, 403, 404, 409),
      },
    },
    async (request) => {
      await reportCommandStatus(ctx, keyHolderOf(request), request.body);
      return { success: true as const, command_id: request.body.command_id, status: request.body.status };
    },
  );
}
