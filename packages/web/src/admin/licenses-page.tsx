import { type CreatedLicenseResponse, type License, LICENSE_STATUSES, TIERS } from '@svc/protocol';
import { useState } from 'preact/hooks';
import { formatDate } from '../ui/format.ts';
import { changeLicense, createLicense, deleteLicense, type LicenseAction, listLicenses } from '../api/licenses.ts';
import { draftLicense, type LicenseForm } from './forms.ts';
import { SecretOnce, useCreateForm } from './ui.tsx';
import { useAction } from '../ui/use-action.ts';
import { useData } from '../ui/use-load.ts';
import { ConfirmButton } from '../ui/confirm.tsx';
import { usePages } from '../ui/pager.tsx';
import { ErrorMessage, LoadError, Notice } from '../ui/alert.tsx';
import { DataTable } from '../ui/table-wrap.tsx';
import { AnySelect, chosenOf } from '../ui/any-select.tsx';
import { Page } from '../ui/page.tsx';

const EMPTY: LicenseForm = {
  tier: 'professional',
  client_id: '',
  name: '',
  description: '',
  max_sessions: '',
  max_agents: '',
  expires_on: '',
};

const unlimited = (n: number | null) => (n === null ? 'unlimited' : String(n));

/** Licenses: create (plaintext key shown once), revoke, deactivate/activate, delete a revoked key. */
export function LicensesPage() {
  const [status, setStatus] = useState('');
  const list = useData(() => listLicenses(chosenOf(status, LICENSE_STATUSES)), [status]);
  const action = useAction();
  const [notice, setNotice] = useState<string | null>(null);
  const [created, setCreated] = useState<CreatedLicenseResponse['license'] | null>(null);

  const change = async (l: License, verb: LicenseAction | 'delete') => {
    setNotice(null);
    const ok = await action.run(() => (verb === 'delete' ? deleteLicense(l.id) : changeLicense(l.id, verb)));
    if (ok) {
      const done = { revoke: 'revoked', deactivate: 'deactivated', activate: 'activated', delete: 'deleted' }[verb];
      setNotice(`License ${l.name} ${done}`);
      list.reload();
    }
  };

  const licenses = list.data?.licenses ?? [];
  const { page, first: firstPage, controls: pager } = usePages(licenses, 'License keys');
  return (
    <Page title="Licenses">
      <div class="adm-page">
        <CreateLicense
          onCreated={(license) => {
            setCreated(license);
            list.reload();
          }}
        />
        {created && (
          <section aria-labelledby="lic-created">
            <h2 id="lic-created">New key for {created.name}</h2>
            <SecretOnce id="license-key" label="License key" value={created.plaintext_key} />
            <button type="button" onClick={() => setCreated(null)}>
              I have stored the key
            </button>
          </section>
        )}
        <section aria-labelledby="lic-list">
          <h2 id="lic-list">Keys</h2>
          <AnySelect
            class="adm-field"
            label="Status"
            value={status}
            options={LICENSE_STATUSES}
            onChange={(v) => {
              setStatus(v);
              firstPage();
            }}
          />
          <LoadError load={list} />
          <ErrorMessage error={action.error} />
          {notice && <Notice>{notice}</Notice>}
          {list.data && licenses.length === 0 && <p>No license keys.</p>}
          {page.items.length > 0 && (
            <DataTable
              label="License keys"
              columns={['Name', 'Client', 'Tier', 'Key prefix', 'Status', 'Limits', 'Expires', 'Created', 'Actions']}
              stack={{ lead: ['Status', 'Name'] }}
            >
              {page.items.map((l) => (
                <tr key={l.id} data-license={l.id}>
                  <th scope="row">
                    {l.name}
                    {l.description ? <div class="adm-hint">{l.description}</div> : null}
                  </th>
                  <td>{l.client_id}</td>
                  <td>{l.tier}</td>
                  <td>
                    <code>{l.key_prefix}…</code>
                  </td>
                  <td>
                    <span class={`adm-badge adm-status-${l.status}`}>{l.status}</span>
                  </td>
                  <td>
                    {unlimited(l.max_sessions)} sessions, {unlimited(l.max_agents)} agents
                  </td>
                  <td>{l.expires_at ? formatDate(l.expires_at) : 'never'}</td>
                  <td>{formatDate(l.created_at)}</td>
                  <td>
                    <div class="adm-actions">
                      {l.revoked_at === null && l.is_active && (
                        <ConfirmButton
                          label="Deactivate"
                          question={`Deactivate ${l.name}? Uploads with it are refused until it is activated.`}
                          disabled={action.busy}
                          onConfirm={() => change(l, 'deactivate')}
                        />
                      )}
                      {l.revoked_at === null && !l.is_active && (
                        <button type="button" disabled={action.busy} onClick={() => change(l, 'activate')}>
                          Activate
                        </button>
                      )}
                      {l.revoked_at === null && (
                        <ConfirmButton
                          label="Revoke"
                          question={`Revoke ${l.name}? This cannot be undone.`}
                          disabled={action.busy}
                          onConfirm={() => change(l, 'revoke')}
                        />
                      )}
                      {l.revoked_at !== null && (
                        <ConfirmButton
                          label="Delete"
                          question={`Delete ${l.name} for good?`}
                          disabled={action.busy}
                          onConfirm={() => change(l, 'delete')}
                        />
                      )}
                    </div>
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
          {pager}
        </section>
      </div>
    </Page>
  );
}

function CreateLicense(props: { onCreated: (license: CreatedLicenseResponse['license']) => void }) {
  const { form, formError, action, set, submit } = useCreateForm(
    EMPTY,
    draftLicense,
    async (body) => (await createLicense(body)).license,
    props.onCreated,
  );
  return (
    <section aria-labelledby="lic-create">
      <h2 id="lic-create">Create a key</h2>
      <form class="adm-form" onSubmit={submit} aria-labelledby="lic-create" noValidate>
        <label>
          Tier
          <select value={form.tier} onChange={set('tier')}>
            {TIERS.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <label>
          Client id
          <input value={form.client_id} onInput={set('client_id')} required />
        </label>
        <label>
          Name
          <input value={form.name} onInput={set('name')} required />
        </label>
        <label>
          Description (optional)
          <input value={form.description} onInput={set('description')} />
        </label>
        <label>
          Max sessions (optional)
          <input inputMode="numeric" value={form.max_sessions} onInput={set('max_sessions')} />
        </label>
        <label>
          Max agents (optional)
          <input inputMode="numeric" value={form.max_agents} onInput={set('max_agents')} />
        </label>
        <label>
          Expires on (optional)
          <input type="date" value={form.expires_on} onInput={set('expires_on')} />
        </label>
        <button type="submit" disabled={action.busy}>
          Create key
        </button>
      </form>
      <ErrorMessage error={formError ?? action.error} />
    </section>
  );
}
