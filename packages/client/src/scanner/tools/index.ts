import type { ExternalTool } from './types.ts';

export type { DiscoveryTool, EnrichmentTool, ExternalTool, ToolContext, ToolInvocation, ToolOutput } from './types.ts';
export { runTool } from './run.ts';

/** Every optional tool `svc scan` knows, in the order they run. A tool missing on the host is skipped. */
export const EXTERNAL_TOOLS: readonly ExternalTool[] = [];
