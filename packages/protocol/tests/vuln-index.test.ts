import { describe, expect, it } from 'vitest';
import { cpeProductKey, cpeVersion } from '../src/vuln-index.ts';

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

  it('reads the version, joining an OpenSSH-style update and leaving others apart', () => {
    expect(cpeVersion('cpe:2.3:a:openbsd:openssh:9.2:p1:*:*:*:*:*:*')).toBe('9.2p1');
    expect(cpeVersion('cpe:2.3:a:apache:http_server:2.4.49:*:*:*:*:*:*:*')).toBe('2.4.49');
    expect(cpeVersion('cpe:2.3:a:vsftpd_project:vsftpd:3.0.0:beta1:*:*:*:*:*:*')).toBe('3.0.0');
    expect(cpeVersion('cpe:/a:openbsd:openssh:9.2p1')).toBe('9.2p1');
    expect(cpeVersion('cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:*')).toBeNull();
    expect(cpeVersion('cpe:2.3:a:openbsd:openssh:-:*:*:*:*:*:*:*')).toBeNull();
    expect(cpeVersion('cpe:/a:openbsd:openssh')).toBeNull();
  });
});
