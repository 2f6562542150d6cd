import { dig } from './dig.ts';
import { masscan } from './masscan.ts';
import { smbclient } from './smbclient.ts';
import { snmpwalk } from './snmpwalk.ts';
import type { ExternalTool } from './types.ts';

export type { DiscoveryTool, EnrichmentTool, ExternalTool, ToolContext, ToolInvocation, ToolOutput } from './types.ts';
export { runTool } from './run.ts';

/** Every optional tool `svc scan` knows, in the order they run. A tool missing on the host is skipped. */
export const EXTERNAL_TOOLS: readonly ExternalTool[] = [masscan, snmpwalk, smbclient, dig];
