/**
 * The Debian source package a product's CPE stands for, so that a banner naming a Debian revision
 * finds the security tracker's verdicts (the tracker is keyed by source package). Most network
 * daemons are packaged under their product name (`openssh`, `redis`, `nginx`, `samba`, `postfix`);
 * these are the ones that are not (Debian's package names as in bookworm). A product whose package
 * is versioned by release (`postgresql-15`, `tomcat10`) is not listed: its banner cannot say which.
 */
const SOURCE_PACKAGES: Readonly<Record<string, string>> = {
  'a:apache:http_server': 'apache2',
  'a:isc:bind': 'bind9',
  'a:isc:dhcp': 'isc-dhcp',
  'a:proftpd:proftpd': 'proftpd-dfsg',
  'a:proftpd_project:proftpd': 'proftpd-dfsg',
  'a:exim:exim': 'exim4',
  'a:matt_johnston:dropbear_ssh_server': 'dropbear',
  'a:dropbear_ssh_project:dropbear_ssh': 'dropbear',
  'a:cyrus:imap': 'cyrus-imapd',
  'a:igor_sysoev:nginx': 'nginx',
  'a:f5:nginx': 'nginx',
  'a:redislabs:redis': 'redis',
};

/** The source package to look a product key (`a:openbsd:openssh`) up under: the table's, else the product's name. */
export function debianPackageOf(product: string): string | null {
  const listed = SOURCE_PACKAGES[product];
  if (listed !== undefined) return listed;
  const name = product.split(':')[2];
  // Debian source package names: lower case letters, digits, + - and ., two characters at least.
  return name !== undefined && /^[a-z0-9][a-z0-9+.-]+$/.test(name) ? name : null;
}
