import { type CommandRecord, isCancellable } from '@svc/protocol';
import { useState } from 'preact/hooks';
import { cancelCommand } from '../api/agent-commands.ts';
import { ConfirmButton } from '../ui/confirm.tsx';
import { formatDate } from '../ui/format.ts';

/**
 * Cancelling a command from its detail view (admins): POST /api/agent-commands/cancel with an
 * optional reason, behind a confirmation that says what happens to a command in this status.
 * The view reloads after it and shows the outcome: `failed` with "Cancelled by ..." at once for
 * a command not started, or the cancellation requested while its agent stops a running one.
 */
export function CancelCommand(props: { command: CommandRecord; onCancelled: () => void }) {
  const { command } = props;
  const [reason, setReason] = useState('');
  if (!isCancellable(command.status) || command.cancel_requested !== null) return null;
  const question =
    command.status === 'acked'
      ? `Cancel command #${command.id}? It is running: its agent is told at its next heartbeat or poll, stops it and reports it failed.`
      : `Cancel command #${command.id}? It is failed at once and never runs.`;
  return (
    <div class="adm-row" data-field="cancel">
      <label class="adm-field">
        Reason (optional)
        <input
          type="text"
          maxLength={500}
          value={reason}
          onInput={(e) => setReason((e.target as HTMLInputElement).value)}
        />
      </label>
      <ConfirmButton
        label="Cancel command"
        question={question}
        confirmLabel="Yes, cancel it"
        dismissLabel="Keep it"
        onConfirm={async () => {
          const body = reason.trim() === '' ? { command_id: command.id } : { command_id: command.id, reason };
          await cancelCommand(body);
          props.onCancelled();
        }}
      />
    </div>
  );
}

/** A running command's requested cancellation, as the detail view lists it. */
export function CancelRequested({ command }: { command: CommandRecord }) {
  const asked = command.cancel_requested;
  if (asked === null) return null;
  return (
    <>
      <dt>Cancel requested</dt>
      <dd data-field="cancel-requested">
        {formatDate(asked.at)} by {asked.by}
        {asked.reason ? `: ${asked.reason}` : ''}
        {command.status === 'acked' ? ' (waiting for the agent to stop it)' : ''}
      </dd>
    </>
  );
}
