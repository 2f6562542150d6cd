import type {
  NmapAddress,
  NmapHost,
  NmapHostname,
  NmapOsMatch,
  NmapPort,
  NmapService,
  NseScript,
  ScriptNode,
} from './types.ts';
import { attr, child, childrenNamed, numAttr, type XmlNode } from './xml-node.ts';

/** Element trees of one `<host>` (and its `<script>`s) to the typed model. */

export function toScriptNodes(node: XmlNode): ScriptNode[] {
  const out: ScriptNode[] = [];
  for (const c of node.children) {
    const key = c.attrs.key;
    if (c.name === 'elem') out.push({ kind: 'elem', ...(key === undefined ? {} : { key }), value: c.text });
    else if (c.name === 'table')
      out.push({ kind: 'table', ...(key === undefined ? {} : { key }), children: toScriptNodes(c) });
  }
  return out;
}

export function toScript(node: XmlNode): NseScript {
  return { id: node.attrs.id ?? '', output: node.attrs.output ?? '', children: toScriptNodes(node) };
}

function toService(node: XmlNode): NmapService {
  return {
    name: node.attrs.name ?? '',
    product: attr(node, 'product'),
    version: attr(node, 'version'),
    extrainfo: attr(node, 'extrainfo'),
    tunnel: attr(node, 'tunnel'),
    method: attr(node, 'method'),
    conf: numAttr(node, 'conf'),
    ostype: attr(node, 'ostype'),
    cpes: childrenNamed(node, 'cpe').map((c) => c.text.trim()),
  };
}

function toPort(node: XmlNode): NmapPort {
  const state = child(node, 'state');
  const service = child(node, 'service');
  return {
    protocol: node.attrs.protocol ?? '',
    portid: Number(node.attrs.portid ?? Number.NaN),
    state: state?.attrs.state ?? 'unknown',
    reason: state === undefined ? undefined : attr(state, 'reason'),
    service: service === undefined ? undefined : toService(service),
    scripts: childrenNamed(node, 'script').map(toScript),
  };
}

function toAddress(node: XmlNode): NmapAddress | null {
  const type = node.attrs.addrtype;
  const addr = node.attrs.addr;
  if (addr === undefined || (type !== 'ipv4' && type !== 'ipv6' && type !== 'mac')) return null;
  return { addr, addrtype: type, vendor: attr(node, 'vendor') };
}

export function toHost(node: XmlNode): NmapHost {
  const status = child(node, 'status');
  const hostnames = child(node, 'hostnames');
  const ports = child(node, 'ports');
  const os = child(node, 'os');
  const hostscript = child(node, 'hostscript');
  return {
    starttime: numAttr(node, 'starttime'),
    endtime: numAttr(node, 'endtime'),
    ...(node.attrs.timedout === 'true' ? { timedOut: true } : {}),
    status: {
      state: status?.attrs.state ?? 'unknown',
      reason: status === undefined ? undefined : attr(status, 'reason'),
    },
    addresses: childrenNamed(node, 'address')
      .map(toAddress)
      .filter((a): a is NmapAddress => a !== null),
    hostnames:
      hostnames === undefined
        ? []
        : childrenNamed(hostnames, 'hostname').map(
            (h): NmapHostname => ({
              name: h.attrs.name ?? '',
              type: attr(h, 'type'),
            }),
          ),
    ports: ports === undefined ? [] : childrenNamed(ports, 'port').map(toPort),
    os:
      os === undefined
        ? []
        : childrenNamed(os, 'osmatch').map(
            (m): NmapOsMatch => ({
              name: m.attrs.name ?? '',
              accuracy: numAttr(m, 'accuracy') ?? 0,
            }),
          ),
    hostscripts: hostscript === undefined ? [] : childrenNamed(hostscript, 'script').map(toScript),
  };
}
