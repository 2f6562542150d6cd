import type { ScanFinding } from '../../pipeline/types.ts';
import type { NmapHost, NmapPort } from '../parse/types.ts';
import { finding, openPorts, serviceEvidence } from './finding.ts';
import { elemAt, portScript, quote } from './script-tree.ts';
import type { RuleFamily } from './types.ts';

/**
 * Database services reachable over the network, and those that answered without credentials:
 * Redis (redis-info answers only without a password), MySQL/MariaDB with an empty root password,
 * PostgreSQL with trust authentication, memcached (no authentication at all), MongoDB listing databases.
 */

const DATABASES: Readonly<Record<string, string>> = {
  postgresql: 'PostgreSQL',
  mysql: 'MySQL/MariaDB',
  mongodb: 'MongoDB',
  mongod: 'MongoDB',
  redis: 'Redis',
  memcached: 'memcached',
  memcache: 'memcached',
};

function exposed(host: NmapHost, port: NmapPort, engine: string): ScanFinding {
  return finding(host, port, {
    rule_id: 'database-exposed',
    title: `${engine} reachable over the network`,
    severity: 'medium',
    category: 'exposed_service',
    evidence: serviceEvidence(port),
    description:
      `A ${engine} server accepts connections from the scanning host. Database services should be reachable ` +
      'only from the application hosts that use them; every other client is attack surface (credential guessing, ' +
      'protocol flaws). Whether it requires authentication was not observed unless another finding says so.',
    remediation: `Bind ${engine} to the interfaces that need it and restrict clients with a host firewall.`,
    cwe: ['CWE-284'],
  });
}

function unauthenticated(
  host: NmapHost,
  port: NmapPort,
  rule_id: string,
  title: string,
  severity: ScanFinding['severity'] & string,
  evidence: string,
  description: string,
  remediation: string,
): ScanFinding {
  return finding(host, port, {
    rule_id,
    title,
    severity,
    category: 'default_credentials',
    evidence,
    description,
    remediation,
    cwe: ['CWE-306'],
  });
}

function checks(host: NmapHost, port: NmapPort, name: string): ScanFinding[] {
  const out: ScanFinding[] = [];
  const redis = portScript(port, 'redis-info');
  if (name === 'redis' && redis !== undefined && redis.children.length > 0) {
    const version = elemAt(redis.children, 'Version');
    out.push(
      unauthenticated(
        host,
        port,
        'redis-unauthenticated',
        'Redis answers without authentication',
        'high',
        quote(redis, 6),
        `The Redis server${version === undefined ? '' : ` ${version}`} answered INFO without a password: anyone who ` +
          'reaches it can read and change all data and, through CONFIG and modules, often run code on the host.',
        'Set requirepass (or ACL users), enable protected-mode, and bind Redis to localhost or a private interface.',
      ),
    );
  }
  const mysql = portScript(port, 'mysql-empty-password');
  if (mysql !== undefined && /has empty password/i.test(mysql.output)) {
    out.push(
      unauthenticated(
        host,
        port,
        'database-empty-password',
        'MySQL/MariaDB account with an empty password',
        'critical',
        quote(mysql),
        'An account on the MySQL/MariaDB server logs in with an empty password, giving anyone full access to its data.',
        'Set strong passwords on every account (mysql_secure_installation) and drop anonymous accounts.',
      ),
    );
  }
  const pgsql = portScript(port, 'pgsql-brute');
  if (pgsql !== undefined && /Trusted authentication/i.test(pgsql.output)) {
    out.push(
      unauthenticated(
        host,
        port,
        'database-trust-authentication',
        'PostgreSQL accepts logins without a password (trust)',
        'high',
        quote(pgsql),
        'PostgreSQL lets network clients in with trust authentication: any user name is accepted without a password.',
        'Replace trust with scram-sha-256 in pg_hba.conf for every host line and reload PostgreSQL.',
      ),
    );
  }
  const memcached = portScript(port, 'memcached-info');
  if (memcached !== undefined && elemAt(memcached.children, 'Authentication') === 'no') {
    const udp = elemAt(memcached.children, 'UDP Port');
    const udpOpen = udp !== undefined && udp !== '0';
    out.push(
      unauthenticated(
        host,
        port,
        'memcached-unauthenticated',
        'memcached without authentication',
        udpOpen ? 'high' : 'medium',
        quote(memcached, 6),
        'memcached answers without authentication: anyone who reaches it can read and overwrite cached data' +
          (udpOpen ? ', and its UDP port is enabled, which is abused for traffic amplification attacks.' : '.'),
        'Bind memcached to localhost or a private interface, enable SASL authentication, and disable UDP (-U 0).',
      ),
    );
  }
  const mongo = portScript(port, 'mongodb-databases');
  if (mongo !== undefined && mongo.children.length > 0 && !/error|unauthorized/i.test(mongo.output)) {
    out.push(
      unauthenticated(
        host,
        port,
        'mongodb-unauthenticated',
        'MongoDB lists its databases without authentication',
        'high',
        quote(mongo, 6),
        'MongoDB listed its databases to an unauthenticated client: its data can be read and changed by anyone who reaches it.',
        'Enable authorization (security.authorization: enabled), create users, and bind to private interfaces.',
      ),
    );
  }
  return out;
}

export const databases: RuleFamily = {
  id: 'databases',
  scripts: ['redis-info', 'memcached-info', 'mongodb-databases'],
  evaluate(host) {
    return openPorts(host).flatMap((port) => {
      const name = port.service?.name ?? '';
      const engine = DATABASES[name];
      if (engine === undefined) return [];
      return [exposed(host, port, engine), ...checks(host, port, name)];
    });
  },
};
