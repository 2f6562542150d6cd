/**
 * Products nmap's service probes name under another vendor than NVD's records do
 * (/usr/share/nmap/nmap-service-probes of nmap 7.93 against NVD's CPE names). A service's CPE is
 * looked up under its own product key and under each of these.
 */
const NVD_NAMES: Readonly<Record<string, readonly string[]>> = {
  'a:redislabs:redis': ['a:redis:redis'],
  // NVD files nginx under F5 since 2020 and under nginx before.
  'a:igor_sysoev:nginx': ['a:f5:nginx', 'a:nginx:nginx'],
  'a:vsftpd:vsftpd': ['a:vsftpd_project:vsftpd', 'a:beasts:vsftpd'],
  'a:mysql:mysql': ['a:oracle:mysql'],
  'a:matt_johnston:dropbear_ssh_server': ['a:dropbear_ssh_project:dropbear_ssh'],
};

/** The product keys (cpeProductKey) a service's CPE is matched under: its own first. */
export function productKeysOf(product: string): readonly string[] {
  const other = NVD_NAMES[product];
  return other === undefined ? [product] : [product, ...other];
}
