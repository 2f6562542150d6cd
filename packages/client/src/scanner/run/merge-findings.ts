import type { ScanFinding } from '../../pipeline/types.ts';
import type { SourcedFinding } from '../tools/index.ts';

/** nmap's own detection rules, as a source next to the tools. */
const NMAP = 'nmap';

const keyOf = (f: SourcedFinding) => JSON.stringify([f.host ?? f.ip ?? '', f.port ?? '', f.protocol ?? '', f.rule_id]);

const sourceOf = (f: SourcedFinding): string => f.source ?? NMAP;

/**
 * nmap's findings with the tools' added. The same weakness on the same host and port (same rule
 * id) is kept once: the first report stays (nmap's when it has one), `sources` names every tool
 * that saw it and the evidence gains each other tool's line. nmap's findings that no tool saw
 * stay exactly as they were.
 */
export function mergeToolFindings(nmap: readonly ScanFinding[], tools: readonly SourcedFinding[]): SourcedFinding[] {
  const out: SourcedFinding[] = [...nmap];
  const index = new Map<string, number>();
  out.forEach((f, i) => {
    if (!index.has(keyOf(f))) index.set(keyOf(f), i);
  });
  for (const f of tools) {
    const at = index.get(keyOf(f));
    if (at === undefined) {
      index.set(keyOf(f), out.length);
      out.push(f);
      continue;
    }
    const kept = out[at] as SourcedFinding;
    const first = sourceOf(kept);
    const sources = kept.sources ?? [first];
    const added = sourceOf(f);
    if (sources.includes(added)) continue;
    out[at] = {
      ...kept,
      source: first,
      sources: [...sources, added],
      evidence: `${kept.evidence ?? ''}; ${f.evidence ?? added}`,
    };
  }
  return out;
}
