import { describe, expect, it } from 'vitest';
import { cpeProductKey } from '../src/vuln-index.ts';
import { cpeVersion, cpeVersionField, joinUpdate, orderedVersion } from '../src/vuln-version.ts';

describe('CPE names in the vulnerability index', () => {
  it('keys NVD 2.3 names and nmap 2.2 URIs of one product alike', () => {
    expect(cpeProductKey('cpe:2.3:a:openbsd:openssh:9.2:p1:*:*:*:*:*:*')).toBe('a:openbsd:openssh');
    expect(cpeProductKey('cpe:/a:openbsd:openssh:9.2p1')).toBe('a:openbsd:openssh');
    expect(cpeProductKey('cpe:/a:Apache:HTTP_Server')).toBe('a:apache:http_server');
    expect(cpeProductKey('cpe:/o:linux:linux_kernel')).toBe('o:linux:linux_kernel');
  });

  it('has no key without a vendor and a product, or for what is not a CPE', () => {
    expect(cpeProductKey('cpe:2.3:a:*:openssh:*:*:*:*:*:*:*:*')).toBeNull();
    expect(cpeProductKey('cpe:/a:openbsd')).toBeNull();
    expect(cpeProductKey('openssh 9.2p1')).toBeNull();
  });

  it('reads the version with its update folded in: a pre-release before, a patch after', () => {
    expect(cpeVersion('cpe:2.3:a:openbsd:openssh:9.2:p1:*:*:*:*:*:*')).toBe('9.2p1');
    expect(cpeVersion('cpe:2.3:a:openbsd:openssh:9.3:-:*:*:*:*:*:*')).toBe('9.3');
    expect(cpeVersion('cpe:2.3:a:apache:http_server:2.4.49:*:*:*:*:*:*:*')).toBe('2.4.49');
    expect(cpeVersion('cpe:2.3:a:vsftpd_project:vsftpd:3.0.0:beta1:*:*:*:*:*:*')).toBe('3.0.0~beta1');
    expect(cpeVersion('cpe:2.3:a:google:tensorflow:2.10:rc0:*:*:*:*:*:*')).toBe('2.10~rc0');
    expect(cpeVersion('cpe:2.3:a:openssl:openssl:1.0.1:a:*:*:*:*:*:*')).toBe('1.0.1a');
    expect(cpeVersion('cpe:2.3:a:oracle:jdk:1.8.0:update151:*:*:*:*:*:*')).toBe('1.8.0+update151');
    expect(cpeVersion('cpe:2.3:a:vendor:product:5.0:ga:*:*:*:*:*:*')).toBe('5.0');
    expect(cpeVersion('cpe:2.3:a:vendor:product:1.0\\-rc1:*:*:*:*:*:*:*')).toBe('1.0~rc1');
    expect(cpeVersion('cpe:/a:openbsd:openssh:9.2p1')).toBe('9.2p1');
    expect(cpeVersion('cpe:/a:vendor:product:1.0:beta2')).toBe('1.0~beta2');
    expect(cpeVersion('cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:*')).toBeNull();
    expect(cpeVersion('cpe:2.3:a:openbsd:openssh:-:*:*:*:*:*:*:*')).toBeNull();
    expect(cpeVersion('cpe:/a:openbsd:openssh')).toBeNull();
  });

  it('tells ANY (*) from NOT APPLICABLE (-), as NISTIR 7696 does', () => {
    expect(cpeVersionField('cpe:2.3:a:apache:http_server:-:*:*:*:*:*:*:*')).toEqual({ kind: 'not_applicable' });
    expect(cpeVersionField('cpe:2.3:a:apache:http_server:*:*:*:*:*:*:*:*')).toEqual({ kind: 'any' });
    expect(cpeVersionField('cpe:/a:apache:http_server')).toEqual({ kind: 'any' });
    expect(cpeVersionField('cpe:2.3:a:apache:http_server:2.2.8:*:*:*:*:*:*:*')).toEqual({
      kind: 'value',
      version: '2.2.8',
    });
    expect(cpeVersionField('http_server 2.2.8')).toBeNull();
  });

  it('writes free-text versions as the index orders them', () => {
    expect(orderedVersion('2.10.0-rc1')).toBe('2.10.0~rc1');
    expect(orderedVersion('8.0.0RC1')).toBe('8.0.0~rc1');
    expect(orderedVersion('1.0.0-beta.2')).toBe('1.0.0~beta2');
    expect(orderedVersion('2.4.49-dev')).toBe('2.4.49~dev');
    expect(orderedVersion('9.3p2')).toBe('9.3p2');
    expect(orderedVersion('1.0.2k')).toBe('1.0.2k');
    expect(orderedVersion(' 7.0.15 ')).toBe('7.0.15');
    expect(joinUpdate('2.10.0-rc1', '*')).toBe('2.10.0~rc1');
  });
});
