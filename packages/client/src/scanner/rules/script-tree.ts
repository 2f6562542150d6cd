import type { NmapHost, NmapPort, NseScript, ScriptNode, ScriptTable } from '../parse/types.ts';

/** Reading NSE script trees: nmap keys most values, so lookups go by key path. */

export function portScript(port: NmapPort, id: string): NseScript | undefined {
  return port.scripts.find((s) => s.id === id);
}

export function hostScript(host: NmapHost, id: string): NseScript | undefined {
  return host.hostscripts.find((s) => s.id === id);
}

/** The node at a key path (`['validity', 'notAfter']`), or undefined. */
export function nodeAt(nodes: readonly ScriptNode[], ...path: string[]): ScriptNode | undefined {
  const [head, ...rest] = path;
  if (head === undefined) return undefined;
  const found = nodes.find((n) => n.key === head);
  if (rest.length === 0 || found === undefined) return found;
  return found.kind === 'table' ? nodeAt(found.children, ...rest) : undefined;
}

export function elemAt(nodes: readonly ScriptNode[], ...path: string[]): string | undefined {
  const n = nodeAt(nodes, ...path);
  return n?.kind === 'elem' ? n.value : undefined;
}

export function tableAt(nodes: readonly ScriptNode[], ...path: string[]): ScriptTable | undefined {
  const n = nodeAt(nodes, ...path);
  return n?.kind === 'table' ? n : undefined;
}

/** The values of the elems directly inside a node list (a list like `kex_algorithms`). */
export function elemValues(nodes: readonly ScriptNode[]): string[] {
  return nodes.flatMap((n) => (n.kind === 'elem' ? [n.value] : []));
}

/** Every elem value anywhere under the nodes, depth first. */
export function allElemValues(nodes: readonly ScriptNode[]): string[] {
  return nodes.flatMap((n) => (n.kind === 'elem' ? [n.value] : allElemValues(n.children)));
}

/** The tables directly inside a node list. */
export function tables(nodes: readonly ScriptNode[]): ScriptTable[] {
  return nodes.filter((n): n is ScriptTable => n.kind === 'table');
}

/** Script output as evidence: trimmed, one line per line, capped so a long listing stays readable. */
export function quote(script: NseScript, maxLines = 12): string {
  const lines = script.output
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== '');
  const shown = lines.slice(0, maxLines);
  if (lines.length > maxLines) shown.push(`... (${lines.length - maxLines} more lines)`);
  return `${script.id}: ${shown.map((l) => l.trim()).join(' | ')}`;
}
