import type { ScanFinding } from '../../pipeline/types.ts';
import type { NmapHost, NmapPort } from '../parse/types.ts';
import { finding, openPorts } from './finding.ts';
import { allElemValues, elemAt, hostScript, quote, tableAt } from './script-tree.ts';
import type { RuleFamily } from './types.ts';

/**
 * SMB signing not required and SMBv1 enabled, from the SMB host scripts. The finding is placed on
 * the open SMB port (direct SMB first, then NetBIOS) so it lines up with the service.
 */

function smbPort(host: NmapHost): NmapPort | undefined {
  const open = openPorts(host);
  return (
    open.find((p) => p.service?.name === 'microsoft-ds') ??
    open.find((p) => p.service?.name === 'netbios-ssn') ??
    undefined
  );
}

function signing(host: NmapHost, port: NmapPort | undefined): ScanFinding[] {
  const evidence: string[] = [];
  const smb2 = hostScript(host, 'smb2-security-mode');
  if (smb2 !== undefined && allElemValues(smb2.children).some((v) => /not required|disabled/i.test(v)))
    evidence.push(quote(smb2, 4));
  const smb1 = hostScript(host, 'smb-security-mode');
  const mode = smb1 === undefined ? undefined : elemAt(smb1.children, 'message_signing');
  if (smb1 !== undefined && mode !== undefined && mode !== 'required')
    evidence.push(`smb-security-mode: message_signing ${mode}`);
  if (evidence.length === 0) return [];
  return [
    finding(host, port, {
      rule_id: 'smb-signing-not-required',
      title: 'SMB message signing not required',
      severity: 'medium',
      category: 'misconfiguration',
      evidence: evidence.join('; '),
      description:
        'The SMB server does not require message signing, so an attacker on the network can relay NTLM ' +
        'authentication to it or tamper with SMB traffic (SMB relay).',
      remediation:
        'Require signing: Samba "server signing = mandatory"; Windows policy "Microsoft network server: Digitally ' +
        'sign communications (always)".',
      cwe: ['CWE-294'],
    }),
  ];
}

function smbv1(host: NmapHost, port: NmapPort | undefined): ScanFinding[] {
  const protocols = hostScript(host, 'smb-protocols');
  if (protocols === undefined) return [];
  const dialects = allElemValues(tableAt(protocols.children, 'dialects')?.children ?? protocols.children);
  const v1 = dialects.filter((d) => /NT LM 0\.12|SMBv1/i.test(d));
  if (v1.length === 0) return [];
  return [
    finding(host, port, {
      rule_id: 'smbv1-enabled',
      title: 'SMBv1 enabled',
      severity: 'medium',
      category: 'vulnerable_software',
      evidence: `smb-protocols: dialects ${dialects.join(', ')}`,
      description:
        'The server still speaks SMBv1, the protocol exploited by EternalBlue/WannaCry; it lacks modern ' +
        'integrity protection and Microsoft has deprecated it.',
      remediation: 'Disable SMBv1 (Samba: server min protocol = SMB2_10; Windows: remove the SMB1 feature).',
      cve: ['CVE-2017-0144'],
      cwe: ['CWE-327'],
      urls: [
        'https://learn.microsoft.com/windows-server/storage/file-server/troubleshoot/detect-enable-and-disable-smbv1-v2-v3',
      ],
    }),
  ];
}

export const smb: RuleFamily = {
  id: 'smb',
  scripts: ['smb-protocols', 'smb-security-mode', 'smb2-security-mode'],
  evaluate(host) {
    const port = smbPort(host);
    return [...signing(host, port), ...smbv1(host, port)];
  },
};
