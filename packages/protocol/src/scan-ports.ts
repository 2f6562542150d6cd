/**
 * The port list a scan may be given (`svc scan --ports`, run_scan's `ports`): nmap's `-p`
 * syntax limited to numbers, ranges and `T:`/`U:` prefixes ("22,80,T:8000-8100,U:161"). Checked
 * by the portal when a command is queued, by the agent before it runs one and by the scanner
 * before it builds nmap's arguments; nothing else reaches nmap's command line.
 */

const PORT_ITEM = /^(?:[TU]:)?\d{1,5}(?:-\d{1,5})?$/;
/** Long enough for any useful list; a longer one is refused rather than passed to nmap. */
export const MAX_PORT_LIST_LENGTH = 1024;

export const PORT_LIST_RULE =
  'a port list: numbers and ranges separated by commas, each optionally T: or U: (e.g. 22,80,8000-8100,U:161)';

export function isScanPortList(ports: string): boolean {
  if (ports === '' || ports.length > MAX_PORT_LIST_LENGTH) return false;
  return ports.split(',').every((item) => {
    if (!PORT_ITEM.test(item)) return false;
    const [lo = 0, hi = lo] = item
      .replace(/^[TU]:/, '')
      .split('-')
      .map(Number);
    return lo >= 0 && hi <= 65535 && lo <= hi;
  });
}
