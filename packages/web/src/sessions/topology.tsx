import type { SessionFile } from '@svc/protocol';

type Topo = NonNullable<SessionFile['topology']>;
type Node = NonNullable<Topo['nodes']>[number];

/** Most hosts drawn; the rest are counted below the graph. */
const MAX_NODES = 120;
const GRADE_CLASS: Record<string, string> = { A: 'g-a', B: 'g-b', C: 'g-c', D: 'g-d', F: 'g-f' };

/**
 * Hosts grouped by subnet, each subnet a hub with its hosts on a ring around it, coloured by
 * host grade (the grade is also in each host's label). Inline SVG: no chart library needed
 * for a star layout, and it scales with the viewBox.
 */
export function Topology(props: { topology: Topo | undefined }) {
  const nodes = (props.topology?.nodes ?? []).filter((n) => n.ip !== undefined).slice(0, MAX_NODES);
  if (nodes.length === 0) return <p>No topology in this session.</p>;
  const total = props.topology?.nodes?.length ?? nodes.length;
  const groups = new Map<string, Node[]>();
  for (const n of nodes) {
    const key = n.subnet ?? n.ip!.split('.').slice(0, 3).join('.');
    groups.set(key, [...(groups.get(key) ?? []), n]);
  }
  const cols = Math.min(3, groups.size);
  const cell = 300;
  const rows = Math.ceil(groups.size / cols);
  const width = cols * cell;
  const height = rows * cell;
  const summary = [...groups].map(([s, ns]) => `${s}: ${ns.length} hosts`).join('; ');
  return (
    <figure class="topology">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-labelledby="topo-title">
        <title id="topo-title">Network topology. {summary}</title>
        {[...groups].map(([subnet, members], gi) => {
          const cx = (gi % cols) * cell + cell / 2;
          const cy = Math.floor(gi / cols) * cell + cell / 2;
          const r = members.length === 1 ? 70 : 110;
          return (
            <g key={subnet}>
              {members.map((n, i) => {
                const a = (2 * Math.PI * i) / members.length - Math.PI / 2;
                return (
                  <line
                    key={`l-${n.ip}`}
                    x1={cx}
                    y1={cy}
                    x2={cx + r * Math.cos(a)}
                    y2={cy + r * Math.sin(a)}
                    class="topo-link"
                  />
                );
              })}
              <circle cx={cx} cy={cy} r={16} class="topo-hub" />
              <text x={cx} y={cy + 34} class="topo-label" text-anchor="middle">
                {subnet}
              </text>
              {members.map((n, i) => {
                const a = (2 * Math.PI * i) / members.length - Math.PI / 2;
                const x = cx + r * Math.cos(a);
                const y = cy + r * Math.sin(a);
                return (
                  <g key={n.ip}>
                    <circle cx={x} cy={y} r={10} class={`topo-node ${GRADE_CLASS[n.risk_grade ?? ''] ?? 'g-none'}`}>
                      <title>
                        {`${n.hostname ? `${n.hostname} ` : ''}${n.ip} · grade ${n.risk_grade ?? '–'} · ${n.port_count ?? 0} open ports`}
                      </title>
                    </circle>
                    {members.length <= 12 ? (
                      <text x={x} y={y - 14} class="topo-label small" text-anchor="middle">
                        {n.ip!.split('.').pop()}
                      </text>
                    ) : null}
                  </g>
                );
              })}
            </g>
          );
        })}
      </svg>
      <figcaption class="muted small">
        {groups.size} subnets, {nodes.length} hosts{total > nodes.length ? ` shown of ${total}` : ''}. Colour: host
        grade A (green) to F (red).
      </figcaption>
    </figure>
  );
}
