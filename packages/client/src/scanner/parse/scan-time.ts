import type { NmapRunInfo } from './types.ts';

/** When the scan ran, for rules that judge time (certificates): its end, else its start, else undefined. */
export function scanTimeOf(info: NmapRunInfo): Date | undefined {
  const seconds = info.finished?.time ?? info.start;
  return seconds === undefined ? undefined : new Date(seconds * 1000);
}
