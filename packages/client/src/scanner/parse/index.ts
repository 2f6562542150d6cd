export { scanTimeOf } from './scan-time.ts';
export { toHostInfos } from './host-info.ts';
export { NmapXmlStream, parseNmapStream, parseNmapXml } from './stream.ts';
export type * from './types.ts';
export { addAnsweredHost, addScannedPorts, answeredAddresses } from './coverage.ts';
