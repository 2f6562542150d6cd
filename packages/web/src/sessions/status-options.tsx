import { PERSON_STATUSES, type RemediationStatus, SCANNER_STATUSES } from '@svc/protocol';
import { label } from '../ui/format.ts';

/**
 * The options of a finding's status control: the statuses a person sets, and apart from them
 * the scanner's own (new, persistent, resolved), which a scan sets and a person does
 * not. `current`: a finding's status, shown but not choosable when it is the scanner's.
 */
export function PersonStatusOptions(props: { current?: RemediationStatus | null }) {
  const current = props.current ?? null;
  const scanners = current !== null && (SCANNER_STATUSES as readonly string[]).includes(current);
  return (
    <>
      <optgroup label="Set by people">
        {PERSON_STATUSES.map((s) => (
          <option key={s} value={s}>
            {label(s)}
          </option>
        ))}
      </optgroup>
      {scanners ? (
        <optgroup label="Set by the scans">
          <option value={current} disabled>
            {label(current)}
          </option>
        </optgroup>
      ) : null}
    </>
  );
}

/** The status filter's options: the people's statuses and the scanner's in groups of their own. */
export function StatusFilterOptions() {
  const option = (s: string) => (
    <option key={s} value={s}>
      {label(s)}
    </option>
  );
  return (
    <>
      <optgroup label="Set by people">{PERSON_STATUSES.map(option)}</optgroup>
      <optgroup label="Set by the scans">{SCANNER_STATUSES.map(option)}</optgroup>
      <optgroup label="Other">{option('untracked')}</optgroup>
    </>
  );
}
