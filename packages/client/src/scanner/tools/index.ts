import { dig } from './dig.ts';
import { masscan } from './masscan.ts';
import { smbclient } from './smbclient.ts';
import { snmpwalk } from './snmpwalk.ts';
import { sslscan } from './sslscan.ts';
import { testssl } from './testssl.ts';
import type { ExternalTool } from './types.ts';
import { whatweb } from './whatweb.ts';

export type {
  DiscoveryTool,
  EnrichmentTool,
  ExternalTool,
  SourcedFinding,
  ToolContext,
  ToolInvocation,
  ToolOutput,
} from './types.ts';
export { runTool } from './run.ts';

/** Every optional tool `svc scan` knows, in the order they run. A tool missing on the host is skipped. */
export const EXTERNAL_TOOLS: readonly ExternalTool[] = [masscan, testssl, sslscan, whatweb, snmpwalk, smbclient, dig];
