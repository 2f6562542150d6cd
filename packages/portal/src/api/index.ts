import type { App, AppContext } from '../context.ts';
import agentCommandsGet from './agent-commands/get.ts';
import agentGroupsDelete from './agent-groups/delete.ts';
import agentGroupsGet from './agent-groups/get.ts';
import agentGroupsPost from './agent-groups/post.ts';
import agentSchedulesDelete from './agent-schedules/delete.ts';
import agentSchedulesGet from './agent-schedules/get.ts';
import agentSchedulesPatch from './agent-schedules/patch.ts';
import agentSchedulesPost from './agent-schedules/post.ts';
import agentsPatch from './agents/patch.ts';
import agentCommandsPatch from './agent-commands/patch.ts';
import agentCommandsPost from './agent-commands/post.ts';
import agentCommandsCancelPost from './agent-commands/cancel/post.ts';
import auditList from './audit/list.ts';
import dbHealthGet from './db-health/get.ts';
import benchmarkGet from './benchmark/get.ts';
import downloadGet from './download/get.ts';
import findingsBulkPost from './findings/bulk/post.ts';
import findingsList from './findings/list.ts';
import findingsSummaryGet from './findings/summary/get.ts';
import findingsCountGet from './findings/count/get.ts';
import healthGet from './health/get.ts';
import healthPost from './health/post.ts';
import licenseGet from './license/get.ts';
import licensesCreate from './licenses/create.ts';
import licensesDelete from './licenses/delete.ts';
import licensesList from './licenses/list.ts';
import licensesUpdate from './licenses/update.ts';
import meGet from './me/get.ts';
import refreshNotAllowed from './refresh/not-allowed.ts';
import refreshPut from './refresh/put.ts';
import remediationPatch from './remediation/patch.ts';
import remediationSettingsGet from './remediation-settings/get.ts';
import remediationSettingsPut from './remediation-settings/put.ts';
import overviewGet from './overview/get.ts';
import overviewPostureGet from './overview/posture/get.ts';
import sessionsBlocksGet from './sessions/blocks/get.ts';
import sessionsClientsGet from './sessions/clients/get.ts';
import sessionsDelete from './sessions/delete.ts';
import sessionsExportGet from './sessions/export/get.ts';
import sessionsFindingGet from './sessions/findings/get.ts';
import sessionsFindingsList from './sessions/findings/list.ts';
import sessionsGet from './sessions/get.ts';
import sessionsLatestStateGet from './sessions/latest-state/get.ts';
import sessionsPatch from './sessions/patch.ts';
import shareGet from './share/get.ts';
import shareRevoke from './share/revoke.ts';
import shareRotate from './share/rotate.ts';
import targetsDelete from './targets/delete.ts';
import targetsChangesGet from './targets/changes/get.ts';
import targetsList from './targets/list.ts';
import uploadPost from './upload/post.ts';
import vulnFeedsPost from './vuln-feeds/post.ts';
import vulnIndexGet from './vuln-index/get.ts';
import webhooksCreate from './webhooks/create.ts';
import webhooksDelete from './webhooks/delete.ts';
import webhooksDeliveries from './webhooks/deliveries.ts';
import webhooksList from './webhooks/list.ts';
import webhooksPing from './webhooks/ping.ts';
import webhooksRedeliver from './webhooks/redeliver.ts';
import webhooksUpdate from './webhooks/update.ts';

/** Every /api operation, one per file. Only registration happens here. */
export function registerApiRoutes(app: App, ctx: AppContext): void {
  for (const route of [
    healthGet,
    healthPost,
    agentsPatch,
    agentGroupsGet,
    agentGroupsPost,
    agentGroupsDelete,
    agentSchedulesGet,
    agentSchedulesPost,
    agentSchedulesPatch,
    agentSchedulesDelete,
    agentCommandsPost,
    agentCommandsCancelPost,
    agentCommandsGet,
    agentCommandsPatch,
    licenseGet,
    meGet,
    licensesList,
    licensesCreate,
    licensesUpdate,
    licensesDelete,
    auditList,
    uploadPost,
    sessionsGet,
    sessionsClientsGet,
    overviewGet,
    overviewPostureGet,
    sessionsLatestStateGet,
    sessionsFindingsList,
    sessionsFindingGet,
    sessionsBlocksGet,
    sessionsExportGet,
    sessionsPatch,
    sessionsDelete,
    remediationPatch,
    findingsList,
    findingsSummaryGet,
    findingsCountGet,
    findingsBulkPost,
    remediationSettingsGet,
    remediationSettingsPut,
    targetsList,
    targetsChangesGet,
    targetsDelete,
    downloadGet,
    shareGet,
    shareRotate,
    shareRevoke,
    refreshPut,
    refreshNotAllowed,
    benchmarkGet,
    webhooksList,
    webhooksCreate,
    webhooksUpdate,
    webhooksDelete,
    webhooksDeliveries,
    webhooksRedeliver,
    webhooksPing,
    dbHealthGet,
    vulnIndexGet,
    vulnFeedsPost,
  ])
    route(app, ctx);
}
