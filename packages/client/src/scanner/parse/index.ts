export { toScript, toScriptNodes } from './convert.ts';
export { scanTimeOf } from './scan-time.ts';
export { primaryAddress, primaryHostname, toHostInfos } from './host-info.ts';
export { type NmapXmlHandlers, NmapXmlStream, parseNmapStream, parseNmapXml } from './stream.ts';
export type * from './types.ts';
