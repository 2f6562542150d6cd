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
import auditGet from './audit/get.ts';
import dbHealthGet from './db-health/get.ts';
import benchmarkGet from './benchmark/get.ts';
import downloadGet from './download/get.ts';
import findingsBulkPost from './findings/bulk/post.ts';
import findingsGet from './findings/get.ts';
import findingsSummaryGet from './findings/summary/get.ts';
import findingsCountGet from './findings/count/get.ts';
import healthGet from './health/get.ts';
import healthPost from './health/post.ts';
import licenseGet from './license/get.ts';
import licensesPost from './licenses/post.ts';
import licensesDelete from './licenses/delete.ts';
import licensesGet from './licenses/get.ts';
import licensesPatch from './licenses/patch.ts';
import meGet from './me/get.ts';
import refreshOtherMethods from './refresh/other-methods.ts';
import refreshPut from './refresh/put.ts';
import remediationUpdatePatch from './remediation-update/patch.ts';
import remediationSettingsGet from './remediation-settings/get.ts';
import remediationSettingsPut from './remediation-settings/put.ts';
import overviewGet from './overview/get.ts';
import overviewPostureGet from './overview/posture/get.ts';
import sessionsBlocksGet from './sessions/blocks/get.ts';
import sessionsClientsGet from './sessions/clients/get.ts';
import sessionsDelete from './sessions/delete.ts';
import sessionsExportGet from './sessions/export/get.ts';
import sessionsFindingsByIndexGet from './sessions/findings/by-index/get.ts';
import sessionsFindingsGet from './sessions/findings/get.ts';
import sessionsGet from './sessions/get.ts';
import sessionsLatestStateGet from './sessions/latest-state/get.ts';
import sessionsPatch from './sessions/patch.ts';
import shareGet from './share/get.ts';
import sessionsShareDelete from './sessions/share/delete.ts';
import sessionsSharePost from './sessions/share/post.ts';
import targetsDelete from './targets/delete.ts';
import targetsChangesGet from './targets/changes/get.ts';
import targetsGet from './targets/get.ts';
import uploadPost from './upload/post.ts';
import vulnFeedsPost from './vuln-feeds/post.ts';
import vulnIndexGet from './vuln-index/get.ts';
import webhooksPost from './webhooks/post.ts';
import webhooksDelete from './webhooks/delete.ts';
import webhooksDeliveriesGet from './webhooks/deliveries/get.ts';
import webhooksGet from './webhooks/get.ts';
import webhooksPingPost from './webhooks/ping/post.ts';
import webhooksRedeliverPost from './webhooks/redeliver/post.ts';
import webhooksPatch from './webhooks/patch.ts';

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
    licensesGet,
    licensesPost,
    licensesPatch,
    licensesDelete,
    auditGet,
    uploadPost,
    sessionsGet,
    sessionsClientsGet,
    overviewGet,
    overviewPostureGet,
    sessionsLatestStateGet,
    sessionsFindingsGet,
    sessionsFindingsByIndexGet,
    sessionsBlocksGet,
    sessionsExportGet,
    sessionsPatch,
    sessionsDelete,
    remediationUpdatePatch,
    findingsGet,
    findingsSummaryGet,
    findingsCountGet,
    findingsBulkPost,
    remediationSettingsGet,
    remediationSettingsPut,
    targetsGet,
    targetsChangesGet,
    targetsDelete,
    downloadGet,
    shareGet,
    sessionsSharePost,
    sessionsShareDelete,
    refreshPut,
    refreshOtherMethods,
    benchmarkGet,
    webhooksGet,
    webhooksPost,
    webhooksPatch,
    webhooksDelete,
    webhooksDeliveriesGet,
    webhooksRedeliverPost,
    webhooksPingPost,
    dbHealthGet,
    vulnIndexGet,
    vulnFeedsPost,
  ])
    route(app, ctx);
}
