import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import {
  checkedAddresses,
  parseWebhookUrl,
  refusalReason,
  UnsafeUrlError,
  type CidrList,
  type Resolver,
} from './url-safety.ts';

/** docs/api.md#webhooks: HTTPS only, every address public unicast, ipaddr.js for the classification. */

const PUBLIC_V4 = '93.184.215.14';
const PUBLIC_V6 = '2606:2800:21f:cb07:6820:80da:af6b:8b2c';

/** A resolver that knows only these names; every other name does not resolve. */
function resolverOf(table: Record<string, string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const fn = async (host: string) => {
    calls.push(host);
    const a = table[host];
    if (a === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return a;
  };
  return Object.assign(fn, { calls });
}

const noDns = resolverOf({});

/** The whole creation-time rule: syntax, then every address. */
async function check(raw: string, resolver: Resolver = noDns, allow: CidrList = []): Promise<string[]> {
  return checkedAddresses(parseWebhookUrl(raw), resolver, allow);
}

async function refusal(raw: string, resolver: Resolver = noDns, allow: CidrList = []): Promise<string> {
  try {
    await check(raw, resolver, allow);
  } catch (err) {
    expect(err).toBeInstanceOf(UnsafeUrlError);
    return (err as Error).message;
  }
  throw new Error(`${raw} was accepted`);
}

describe('parseWebhookUrl: syntax', () => {
  it.each([
    ['http://example.com/hook', 'url must use https'],
    ['ftp://example.com/', 'url must use https'],
    ['ws://example.com/', 'url must use https'],
    ['wss://example.com/', 'url must use https'],
    ['file:///etc/passwd', 'url must use https'],
    ['gopher://example.com/', 'url must use https'],
    ['javascript:alert(1)', 'url must use https'],
    ['data:text/plain,hi', 'url must use https'],
    ['https://u:p@example.com/', 'url must not contain credentials'],
    ['https://u@example.com/', 'url must not contain credentials'],
    ['https://:p@example.com/', 'url must not contain credentials'],
    ['not a url', 'url is not a valid URL'],
    ['https://', 'url is not a valid URL'],
    ['https://[::1/', 'url is not a valid URL'],
  ])('%s is refused: %s', (raw, message) => {
    expect(() => parseWebhookUrl(raw)).toThrow(new UnsafeUrlError(message));
  });

  it('accepts an https URL and keeps path, query and port', () => {
    expect(parseWebhookUrl('https://hooks.example.com:8443/in/svc?x=1').toString()).toBe(
      'https://hooks.example.com:8443/in/svc?x=1',
    );
  });

  it.each([
    ['https://127.1/', '127.0.0.1'],
    ['https://0x7f.1/', '127.0.0.1'],
    ['https://2130706433/', '127.0.0.1'],
    ['https://017700000001/', '127.0.0.1'],
    ['https://0177.0.0.1/', '127.0.0.1'],
    ['https://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
    ['https://[0:0:0:0:0:0:0:1]/', '[::1]'],
  ])('normalises the host of %s to %s before any check', (raw, host) => {
    expect(parseWebhookUrl(raw).hostname).toBe(host);
  });
});

describe('refusalReason: address classification', () => {
  it.each([
    // IPv4 loopback, private, link-local and metadata, CGNAT, unspecified, broadcast, multicast
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['192.168.0.1', 'private'],
    ['192.168.255.254', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['169.254.0.1', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['100.127.255.254', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    // documentation, benchmarking, reserved
    ['192.0.2.1', 'reserved'],
    ['198.51.100.1', 'reserved'],
    ['203.0.113.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['240.0.0.1', 'reserved'],
    // IPv6
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fd00::1', 'uniqueLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['64:ff9b::7f00:1', 'rfc6052'],
    ['64:ff9b:1::a00:1', 'rfc6052'],
    ['2002:7f00:1::', '6to4'],
    ['2001::1', 'teredo'],
    ['100::1', 'discard'],
    ['fec0::1', 'deprecatedSiteLocal'],
  ])('%s is refused (%s)', (address, range) => {
    const reason = refusalReason(address);
    expect(reason).not.toBeNull();
    expect(reason).toContain(`(${range})`);
  });

  it.each([
    // IPv4-mapped IPv6 is judged as the IPv4 address it carries
    ['::ffff:127.0.0.1', '127.0.0.1 is not a public address (loopback)'],
    ['::ffff:7f00:1', '127.0.0.1 is not a public address (loopback)'],
    ['::ffff:10.1.2.3', '10.1.2.3 is not a public address (private)'],
    ['::ffff:169.254.169.254', '169.254.169.254 is not a public address (linkLocal)'],
  ])('IPv4-mapped %s is refused as %s', (address, reason) => {
    expect(refusalReason(address)).toBe(reason);
  });

  it.each([
    // IPv4-compatible (deprecated ::/96) and other addresses outside global unicast 2000::/3
    ['::7f00:1'],
    ['::127.0.0.1'],
    ['::a00:1'],
    ['5f00::1'],
    ['3fff::1'],
    ['::ffff:0:7f00:1'],
  ])('%s (outside public IPv6 unicast) is refused', (address) => {
    expect(refusalReason(address)).not.toBeNull();
  });

  it.each([
    ['93.184.215.14'],
    ['8.8.8.8'],
    ['1.1.1.1'],
    ['172.32.0.1'],
    ['100.128.0.1'],
    ['::ffff:93.184.215.14'],
    [PUBLIC_V6],
    ['2a00:1450:4001:81d::200e'],
  ])('%s is a public unicast address', (address) => {
    expect(refusalReason(address)).toBeNull();
  });

  it('a non-address is refused', () => {
    expect(refusalReason('example.com')).toBe('example.com is not an IP address');
  });

  it('SVC_WEBHOOK_ALLOW_CIDRS lets exactly the listed ranges through (IPv4-mapped forms included)', () => {
    const allow: CidrList = [ipaddr.parseCIDR('127.0.0.0/8')];
    expect(refusalReason('127.0.0.1', allow)).toBeNull();
    expect(refusalReason('127.9.9.9', allow)).toBeNull();
    expect(refusalReason('::ffff:127.0.0.1', allow)).toBeNull();
    expect(refusalReason('10.0.0.1', allow)).toContain('(private)');
    expect(refusalReason('::1', allow)).toContain('(loopback)');
    expect(refusalReason('169.254.169.254', allow)).toContain('(linkLocal)');
  });
});

describe('checkedAddresses: the creation and delivery rule', () => {
  it.each([
    'https://127.0.0.1/',
    'https://127.1/',
    'https://0x7f.1/',
    'https://2130706433/',
    'https://017700000001/',
    'https://[::1]/',
    'https://10.1.2.3/',
    'https://172.16.5.4/',
    'https://192.168.1.1/',
    'https://169.254.169.254/latest/meta-data/',
    'https://[fe80::1]/',
    'https://100.64.0.1/',
    'https://0.0.0.0/',
    'https://[::]/',
    'https://224.0.0.1/',
    'https://255.255.255.255/',
    'https://192.0.2.10/',
    'https://198.51.100.10/',
    'https://203.0.113.10/',
    'https://[2001:db8::1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:7f00:1]/',
    'https://[::127.0.0.1]/',
    'https://[64:ff9b::7f00:1]/',
    'https://[fd00::1]/',
  ])('%s is refused without any DNS lookup', async (raw) => {
    const resolver = resolverOf({});
    expect(await refusal(raw, resolver)).toMatch(/^url is not allowed: .* is not a public address \(/);
    expect(resolver.calls).toEqual([]);
  });

  it.each(['localhost', 'LOCALHOST', 'localhost.', 'api.localhost', 'x.y.localhost.'])(
    'the name %s is refused whatever DNS answers',
    async (host) => {
      // RFC 6761: localhost names are loopback; a resolver answering otherwise is not believed.
      const resolver = resolverOf({ [host.toLowerCase()]: [PUBLIC_V4] });
      expect(await refusal(`https://${host}/`, resolver)).toMatch(/^url is not allowed: .*\(loopback\)$/);
    },
  );

  it('accepts a public IPv4 or IPv6 literal and answers it', async () => {
    expect(await check(`https://${PUBLIC_V4}/`)).toEqual([PUBLIC_V4]);
    expect(await check(`https://[${PUBLIC_V6}]/`)).toEqual([PUBLIC_V6]);
  });

  it('accepts a name whose every address is public, and answers them all', async () => {
    const resolver = resolverOf({ 'hooks.example.com': [PUBLIC_V4, PUBLIC_V6] });
    expect(await check('https://hooks.example.com/in', resolver)).toEqual([PUBLIC_V4, PUBLIC_V6]);
    expect(resolver.calls).toEqual(['hooks.example.com']);
  });

  it.each([
    [[PUBLIC_V4, '10.0.0.7'], '10.0.0.7'],
    [['127.0.0.1', PUBLIC_V4], '127.0.0.1'],
    [[PUBLIC_V6, '::1'], '::1'],
    [[PUBLIC_V4, '::ffff:169.254.169.254'], '169.254.169.254'],
  ])('refuses a name with one public and one non-public address %j', async (addresses, bad) => {
    const resolver = resolverOf({ 'mixed.example.com': addresses });
    expect(await refusal('https://mixed.example.com/', resolver)).toContain(`${bad} is not a public address`);
  });

  it('refuses a name that does not resolve, or resolves to nothing or to garbage', async () => {
    expect(await refusal('https://nowhere.example/', resolverOf({}))).toBe('url host nowhere.example does not resolve');
    expect(await refusal('https://empty.example/', resolverOf({ 'empty.example': [] }))).toBe(
      'url host empty.example does not resolve',
    );
    expect(await refusal('https://junk.example/', resolverOf({ 'junk.example': ['not-an-ip'] }))).toBe(
      'url is not allowed: not-an-ip is not an IP address',
    );
  });

  it('with an allow list, a listed private address passes and others do not', async () => {
    const allow: CidrList = [ipaddr.parseCIDR('127.0.0.0/8')];
    expect(await check('https://127.0.0.1:8443/', noDns, allow)).toEqual(['127.0.0.1']);
    expect(await check('https://receiver.test/', resolverOf({ 'receiver.test': ['127.0.0.1'] }), allow)).toEqual([
      '127.0.0.1',
    ]);
    expect(await refusal('https://10.0.0.1/', noDns, allow)).toContain('(private)');
  });
});
