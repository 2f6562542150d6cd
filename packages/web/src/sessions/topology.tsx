import type { SessionFile } from '@svc/protocol';
import { useEffect, useRef, useState } from 'preact/hooks';
import { countOf, formatCount, formatScore, NO_VALUE } from '../ui/format.ts';
import { DataTable } from '../ui/table-wrap.tsx';

type Topo = NonNullable<SessionFile['topology']>;
type Node = NonNullable<Topo['nodes']>[number];

/** Most hosts drawn (four full /24s); the rest are counted below the drawing and listed in the table. */
const MAX_NODES = 1024;
const GRADES = ['A', 'B', 'C', 'D', 'F'] as const;

/** Drawing units: at zoom 100 % one unit is one CSS pixel, so labels are 11 px and more. */
const CELL = 36;
const HOST = 30;
const HEADER = 30;
const GAP = 24;
const WIDTH = 16 * CELL + 2 * GAP;
const ZOOMS = [0.25, 0.5, 0.75, 1, 1.5, 2, 3] as const;

interface Subnet {
  prefix: string;
  hosts: Node[];
  avgRisk: number | null;
}

function ipKey(ip: string): number[] {
  return ip.split(/[.:]/).map((p) => Number.parseInt(p, ip.includes(':') ? 16 : 10) || 0);
}

function compareIp(a: string, b: string): number {
  const x = ipKey(a);
  const y = ipKey(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++)
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}

/** The /24 of an IPv4 address (what the scanner's `subnet` holds); other addresses group as they are given. */
function subnetOf(n: Node): string {
  if (n.subnet) return n.subnet;
  const parts = n.ip!.split('.');
  return parts.length === 4 ? `${parts.slice(0, 3).join('.')}.0/24` : 'other';
}

/** Hosts by subnet, subnets and hosts in address order. */
function subnetsOf(nodes: readonly Node[]): Subnet[] {
  const groups = new Map<string, Node[]>();
  for (const n of nodes) {
    const key = subnetOf(n);
    const list = groups.get(key);
    if (list === undefined) groups.set(key, [n]);
    else list.push(n);
  }
  return [...groups]
    .map(([prefix, hosts]) => {
      hosts.sort((a, b) => compareIp(a.ip!, b.ip!));
      const risks = hosts.map((h) => h.risk_score).filter((r): r is number => typeof r === 'number');
      return { prefix, hosts, avgRisk: risks.length === 0 ? null : risks.reduce((a, b) => a + b, 0) / risks.length };
    })
    .sort((a, b) => compareIp(a.prefix, b.prefix));
}

/** The host's label in its cell: the last part of its address. */
const shortLabel = (ip: string) => ip.split(/[.:]/).filter(Boolean).pop() ?? ip;
const gradeClass = (g: string | undefined) =>
  `topo-host grade-${GRADES.includes(g as 'A') ? g!.toLowerCase() : 'none'}`;

/** Subnet blocks one under the other, hosts in rows of up to 16 (a full /24 is a 16 × 16 square). */
function layout(subnets: Subnet[]) {
  let y = GAP;
  const blocks = subnets.map((s) => {
    const cols = Math.min(16, Math.max(1, s.hosts.length));
    const rows = Math.ceil(s.hosts.length / cols);
    const top = y;
    y += HEADER + rows * CELL + GAP;
    return { subnet: s, top, cols };
  });
  return { blocks, height: y };
}

function hostTitle(n: Node): string {
  return `${n.hostname ? `${n.hostname} ` : ''}${n.ip} · grade ${n.risk_grade ?? NO_VALUE} · risk ${formatScore(n.risk_score)} · ${n.port_count ?? 0} open ports`;
}

/**
 * Hosts grouped by subnet: each subnet a block with its address, host count and average
 * risk, its hosts a grid of cells in address order, labelled with the last part of the
 * address and coloured by grade (grade, name and ports in each cell's title and in the
 * table below). Drawn at its natural size and zoomed by buttons, Ctrl + wheel (a trackpad
 * pinch) or the + and − keys; it scrolls inside its own box, so a phone shows readable
 * labels instead of a whole network shrunk to dots.
 */
export function Topology(props: { topology: Topo | undefined }) {
  const all = (props.topology?.nodes ?? []).filter((n) => n.ip !== undefined);
  const [zoom, setZoom] = useState(1);
  const viewport = useRef<HTMLElement>(null);
  const step = (dir: 1 | -1) =>
    setZoom((z) => {
      const i = ZOOMS.findIndex((v) => v >= z - 1e-9);
      return ZOOMS[Math.min(ZOOMS.length - 1, Math.max(0, (i === -1 ? ZOOMS.length - 1 : i) + dir))]!;
    });
  const fit = () => {
    const width = viewport.current?.clientWidth ?? WIDTH;
    setZoom(Math.min(1, Math.max(ZOOMS[0], width / WIDTH)));
  };

  useEffect(() => {
    const el = viewport.current;
    if (el === null) return;
    // Not passive: Ctrl + wheel (and a trackpad pinch, which arrives as one) zooms the drawing, not the page.
    const wheel = (e: WheelEvent) => {
      if (!e.ctrlKey) return;
      e.preventDefault();
      step(e.deltaY < 0 ? 1 : -1);
    };
    el.addEventListener('wheel', wheel, { passive: false });
    return () => el.removeEventListener('wheel', wheel);
  }, [all.length > 0]);

  if (all.length === 0) return <p>No topology in this session.</p>;
  const drawn = all.slice(0, MAX_NODES);
  const subnets = subnetsOf(drawn);
  const { blocks, height } = layout(subnets);
  const everySubnet = all.length > drawn.length ? subnetsOf(all) : subnets;
  const summary = `${formatCount(subnets.length)} subnets, ${formatCount(drawn.length)} hosts${all.length > drawn.length ? ` drawn of ${formatCount(all.length)}` : ''}`;

  return (
    <figure class="topology">
      <fieldset class="plain topo-controls">
        <legend class="visually-hidden">Zoom</legend>
        <button type="button" onClick={() => step(-1)} disabled={zoom <= ZOOMS[0]} aria-label="Zoom out">
          −
        </button>
        <output aria-live="polite" aria-label="Zoom level">
          {Math.round(zoom * 100)} %
        </output>
        <button type="button" onClick={() => step(1)} disabled={zoom >= ZOOMS.at(-1)!} aria-label="Zoom in">
          +
        </button>
        <button type="button" class="button-quiet" onClick={fit}>
          Fit
        </button>
        <button type="button" class="button-quiet" onClick={() => setZoom(1)}>
          Actual size
        </button>
      </fieldset>
      <section
        ref={viewport}
        class="topo-viewport"
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must take focus to scroll and zoom by keyboard
        tabIndex={0}
        aria-label="Network topology drawing; + and − zoom"
        onKeyDown={(e) => {
          if (e.key === '+' || e.key === '=') step(1);
          else if (e.key === '-' || e.key === '−') step(-1);
          else return;
          e.preventDefault();
        }}
      >
        <svg
          width={Math.round(WIDTH * zoom)}
          height={Math.round(height * zoom)}
          viewBox={`0 0 ${WIDTH} ${height}`}
          role="img"
          aria-labelledby="topo-title"
        >
          <title id="topo-title">Network topology: {summary}</title>
          {blocks.map(({ subnet, top, cols }) => (
            <g key={subnet.prefix} class="topo-subnet">
              <text x={GAP} y={top + 18} class="topo-subnet-label">
                {subnet.prefix} · {countOf(subnet.hosts.length, 'host', 'hosts')} · average risk{' '}
                {formatScore(subnet.avgRisk)}
              </text>
              {subnet.hosts.map((n, i) => {
                const x = GAP + (i % cols) * CELL;
                const y = top + HEADER + Math.floor(i / cols) * CELL;
                return (
                  <g key={n.ip}>
                    <rect x={x} y={y} width={HOST} height={HOST} rx={5} class={gradeClass(n.risk_grade)}>
                      <title>{hostTitle(n)}</title>
                    </rect>
                    <text x={x + HOST / 2} y={y + HOST / 2 + 4} class="topo-host-label" text-anchor="middle">
                      {shortLabel(n.ip!)}
                    </text>
                  </g>
                );
              })}
            </g>
          ))}
        </svg>
      </section>
      <figcaption class="muted small">
        {summary}. Each cell is a host, labelled with the last part of its address; colour: grade A (green) to F (red),
        grey without a grade.
      </figcaption>
      <details>
        <summary>Subnets and hosts as tables</summary>
        <DataTable
          label="Subnets"
          columns={['Subnet', 'Hosts', 'Average risk', ...GRADES.map((g) => `Grade ${g}`)]}
          stack={{ lead: ['Subnet', 'Average risk'] }}
        >
          {everySubnet.map((s) => (
            <tr key={s.prefix}>
              <th scope="row">{s.prefix}</th>
              <td>{formatCount(s.hosts.length)}</td>
              <td>{formatScore(s.avgRisk)}</td>
              {GRADES.map((g) => (
                <td key={g}>{s.hosts.filter((h) => h.risk_grade === g).length}</td>
              ))}
            </tr>
          ))}
        </DataTable>
        <DataTable
          label="Hosts"
          columns={['Address', 'Host name', 'Subnet', 'Grade', 'Risk', 'Open ports']}
          stack={{ lead: ['Grade', 'Address'] }}
        >
          {everySubnet.flatMap((s) =>
            s.hosts.map((n) => (
              <tr key={n.ip}>
                <th scope="row">{n.ip}</th>
                <td>{n.hostname || NO_VALUE}</td>
                <td>{s.prefix}</td>
                <td>{n.risk_grade ?? NO_VALUE}</td>
                <td>{formatScore(n.risk_score)}</td>
                <td>{formatCount(n.port_count ?? 0)}</td>
              </tr>
            )),
          )}
        </DataTable>
      </details>
    </figure>
  );
}
