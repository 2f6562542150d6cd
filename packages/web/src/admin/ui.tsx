import { useRef, useState } from 'preact/hooks';
import { useAction } from '../ui/use-action.ts';
import type { Draft } from './forms.ts';
import './admin.css';

/** Building blocks of the administration pages' create forms. */

/**
 * A create form: its fields, the protocol rule the draft breaks (checked before anything is
 * sent), and the send; what the portal created goes to `onCreated` and the form empties.
 */
export function useCreateForm<F, B, R>(
  empty: F,
  draft: (form: F) => Draft<B>,
  send: (body: B) => Promise<R>,
  onCreated: (created: R) => void,
) {
  const [form, setForm] = useState<F>(empty);
  const [formError, setFormError] = useState<string | null>(null);
  const action = useAction();
  const set = (key: keyof F) => (e: { currentTarget: { value: string } }) =>
    setForm({ ...form, [key]: e.currentTarget.value });
  const submit = async (event: Event) => {
    event.preventDefault();
    const checked = draft(form);
    setFormError(checked.ok ? null : checked.message);
    if (!checked.ok) return;
    let created: R | undefined;
    const ok = await action.run(async () => {
      created = await send(checked.body);
    });
    if (ok) {
      onCreated(created as R);
      setForm(empty);
    }
  };
  return { form, setForm, formError, action, set, submit };
}

/** A secret shown once: read-only, selectable, with a copy button. */
export function SecretOnce({ label, value, id }: { label: string; value: string; id: string }) {
  const [copied, setCopied] = useState<string | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('Copied');
    } catch {
      inputRef.current?.select();
      setCopied('Selected: press Ctrl+C to copy');
    }
  };
  return (
    <div class="adm-secret">
      <label for={id}>{label} (shown once; it cannot be read again)</label>
      <div class="adm-row">
        <input id={id} ref={inputRef} readOnly value={value} spellcheck={false} autocomplete="off" />
        <button type="button" onClick={copy}>
          Copy
        </button>
      </div>
      <span role="status">{copied}</span>
    </div>
  );
}
