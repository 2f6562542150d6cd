import { type AgentView, agentSearchProblem } from '@svc/protocol';
import { useEffect, useState } from 'preact/hooks';
import { listAgents } from '../api/agents.ts';
import { ErrorMessage } from '../ui/alert.tsx';
import { formatCount } from '../ui/format.ts';
import { useData } from '../ui/use-load.ts';
import { agentKey, agentLabels, byName } from './agent-view.ts';

/** Agents the picker lists at once; the search narrows a larger fleet. */
export const PICKER_LIMIT = 1000;
/** Typing pauses this long before the portal is asked: one search per word, not per key. */
const SEARCH_DELAY_MS = 250;

/**
 * The Commands form's agent choice: a search box (the portal's fleet search: host name,
 * address or agent id) narrowing a list sorted by name, labelled so that agents with the same
 * host name read differently (address, then id). Both are native controls, so the keyboard and
 * screen readers work as everywhere else: type, Tab (or Enter, which takes the first match),
 * then the arrow keys. A search that leaves one agent chooses it.
 */
export function AgentPicker(props: { chosen: AgentView | null; onChoose: (agent: AgentView | null) => void }) {
  const { chosen, onChoose } = props;
  const [term, setTerm] = useState('');
  const [query, setQuery] = useState('');
  const problem = term.trim() === '' ? null : agentSearchProblem(term.trim());
  useEffect(() => {
    if (problem !== null) return;
    const timer = setTimeout(() => setQuery(term.trim()), SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [term, problem]);
  const listed = useData(() => listAgents({ limit: PICKER_LIMIT, ...(query === '' ? {} : { q: query }) }), [query]);
  const agents = byName(listed.data?.agents ?? []);
  const labels = agentLabels(agents);
  const chosenKey = chosen === null ? '' : agentKey(chosen);

  // Keep the choice among what is listed: the only match is taken, a choice the search left out is dropped.
  useEffect(() => {
    if (listed.data === null) return;
    const only = agents.length === 1 ? (agents[0] ?? null) : null;
    if (only !== null && query !== '') onChoose(only);
    else if (chosen !== null && !agents.some((a) => agentKey(a) === chosenKey)) onChoose(null);
  }, [listed.data]);

  const total = listed.data === null ? 0 : listed.data.counts.online + listed.data.counts.stale;
  return (
    <div class="agent-picker">
      <div class="adm-field">
        <label for="queue-agent-search">Find an agent</label>
        <input
          id="queue-agent-search"
          type="search"
          value={term}
          spellcheck={false}
          autocomplete="off"
          aria-describedby="queue-agent-search-hint"
          aria-invalid={problem !== null}
          onInput={(e) => setTerm(e.currentTarget.value)}
          onKeyDown={(e) => {
            // Enter picks the first match rather than sending the form.
            if (e.key !== 'Enter') return;
            e.preventDefault();
            if (agents[0] !== undefined) onChoose(agents[0]);
          }}
        />
        <span class="adm-hint" id="queue-agent-search-hint">
          Host name, address or agent id
        </span>
      </div>
      <ErrorMessage error={problem ?? listed.error} />
      <div class="adm-field">
        <label for="queue-agent">Agent</label>
        <select
          id="queue-agent"
          value={chosenKey}
          aria-describedby="queue-agent-count"
          onChange={(e) => onChoose(agents.find((a) => agentKey(a) === e.currentTarget.value) ?? null)}
        >
          <option value="">Choose an agent</option>
          {agents.map((a) => (
            <option key={agentKey(a)} value={agentKey(a)} title={a.agent_id}>
              {labels.get(agentKey(a))}
              {a.is_stale ? ' — stale' : ''}
            </option>
          ))}
        </select>
        <span class="adm-hint" id="queue-agent-count" role="status">
          {listed.data === null ? '' : pickerStatus(agents.length, total, query)}
        </span>
      </div>
    </div>
  );
}

/** What the list holds: `2 agents match raspberrypi`, `1,000 of 1,204 agents; type to narrow`. */
function pickerStatus(listed: number, total: number, query: string): string {
  if (listed === 0) return query === '' ? 'No registered agents' : `No agent matches ${query}`;
  const count = listed === total ? formatCount(total) : `${formatCount(listed)} of ${formatCount(total)}`;
  const noun = total === 1 ? 'agent' : 'agents';
  const match = query === '' ? '' : ` ${total === 1 ? 'matches' : 'match'} ${query}`;
  return `${count} ${noun}${match}${listed < total ? '; type to narrow' : ''}`;
}
