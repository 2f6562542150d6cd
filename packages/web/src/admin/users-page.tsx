import { ROLES, type User } from '@svc/protocol';
import { useState } from 'preact/hooks';
import { formatDate } from '../ui/format.ts';
import { createUser, deleteUser, listUsers, revokeUserSessions, updateUser } from '../api/users.ts';
import { draftUser, splitList, type UserForm } from './forms.ts';
import { useCreateForm } from './ui.tsx';
import { useAction } from '../ui/use-action.ts';
import { useData } from '../ui/use-load.ts';
import { ConfirmButton } from '../ui/confirm.tsx';
import { usePages } from '../ui/pager.tsx';
import { ErrorMessage, LoadError, Notice } from '../ui/alert.tsx';
import { DataTable } from '../ui/table-wrap.tsx';
import { Page } from '../ui/page.tsx';

const EMPTY: UserForm = { email: '', password: '', role: 'member', client_ids: '' };

/** Users of the portal's identity provider: create scoped users, change role and client ids, sign out everywhere, delete. */
export function UsersPage() {
  const list = useData(listUsers, []);
  const action = useAction();
  const [notice, setNotice] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const users = list.data?.users ?? [];
  const { page, controls: pager } = usePages(users, 'Users');

  const remove = async (u: User) => {
    setNotice(null);
    if (await action.run(() => deleteUser(u.id))) {
      setNotice(`User ${u.email} deleted`);
      list.reload();
    }
  };

  // Every refresh-token family of the user ends; the user signs in again everywhere.
  const signOutEverywhere = async (u: User) => {
    setNotice(null);
    let ended = 0;
    const ok = await action.run(async () => {
      ended = (await revokeUserSessions(u.id)).revoked_sessions;
    });
    if (ok) setNotice(`${u.email} signed out everywhere (${ended} session${ended === 1 ? '' : 's'} ended)`);
  };

  return (
    <Page title="Users">
      <div class="adm-page">
        <CreateUser
          onCreated={(u) => {
            setNotice(`User ${u.email} created`);
            list.reload();
          }}
        />
        <section aria-labelledby="users-list">
          <h2 id="users-list">Users</h2>
          <LoadError load={list} />
          <ErrorMessage error={action.error} />
          {notice && <Notice>{notice}</Notice>}
          {page.items.length > 0 && (
            <DataTable
              label="Users"
              columns={['Email', 'Role', 'Client ids', 'Created', 'Actions']}
              stack={{ lead: ['Role', 'Email'] }}
            >
              {page.items.map((u) =>
                editing === u.id ? (
                  <EditUser
                    key={u.id}
                    user={u}
                    onDone={(message) => {
                      setEditing(null);
                      if (message) {
                        setNotice(message);
                        list.reload();
                      }
                    }}
                  />
                ) : (
                  <tr key={u.id} data-user={u.email}>
                    <th scope="row">{u.email}</th>
                    <td>{u.role}</td>
                    <td>{u.client_ids.length ? u.client_ids.join(', ') : 'all (admin)'}</td>
                    <td>{formatDate(u.created_at)}</td>
                    <td>
                      <div class="adm-actions">
                        <button type="button" onClick={() => setEditing(u.id)}>
                          Edit
                        </button>
                        <ConfirmButton
                          label="Sign out everywhere"
                          question={`End every session of ${u.email}? They must sign in again.`}
                          disabled={action.busy}
                          onConfirm={() => signOutEverywhere(u)}
                        />
                        <ConfirmButton
                          label="Delete"
                          question={`Delete user ${u.email}?`}
                          disabled={action.busy}
                          onConfirm={() => remove(u)}
                        />
                      </div>
                    </td>
                  </tr>
                ),
              )}
            </DataTable>
          )}
          {pager}
        </section>
      </div>
    </Page>
  );
}

function EditUser(props: { user: User; onDone: (message: string | null) => void }) {
  const [role, setRole] = useState<string>(props.user.role);
  const [clientIds, setClientIds] = useState(props.user.client_ids.join(', '));
  const action = useAction();
  const save = async () => {
    const known = ROLES.find((r) => r === role);
    const body = { ...(known === undefined ? {} : { role: known }), client_ids: splitList(clientIds) };
    if (await action.run(() => updateUser(props.user.id, body))) props.onDone(`User ${props.user.email} updated`);
  };
  return (
    <tr data-user={props.user.email}>
      <th scope="row">{props.user.email}</th>
      <td>
        <label class="adm-field">
          Role
          <select value={role} onChange={(e) => setRole(e.currentTarget.value)}>
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
      </td>
      <td>
        <label class="adm-field">
          Client ids
          <input value={clientIds} onInput={(e) => setClientIds(e.currentTarget.value)} />
        </label>
      </td>
      <td>{formatDate(props.user.created_at)}</td>
      <td>
        <div class="adm-actions">
          <button type="button" disabled={action.busy} onClick={save}>
            Save
          </button>
          <button type="button" onClick={() => props.onDone(null)}>
            Cancel
          </button>
        </div>
        <ErrorMessage error={action.error} />
      </td>
    </tr>
  );
}

function CreateUser(props: { onCreated: (u: User) => void }) {
  const { form, formError, action, set, submit } = useCreateForm(
    EMPTY,
    draftUser,
    async (body) => (await createUser(body)).user,
    props.onCreated,
  );
  return (
    <section aria-labelledby="users-create">
      <h2 id="users-create">Create a user</h2>
      <form class="adm-form" onSubmit={submit} aria-labelledby="users-create" noValidate>
        <label>
          Email
          <input type="email" autocomplete="off" value={form.email} onInput={set('email')} required />
        </label>
        <label>
          Password (12 or more characters)
          <input type="password" autocomplete="new-password" value={form.password} onInput={set('password')} />
        </label>
        <label>
          Role
          <select value={form.role} onChange={set('role')}>
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <label>
          Client ids (a member sees only these)
          <input value={form.client_ids} onInput={set('client_ids')} />
        </label>
        <button type="submit" disabled={action.busy}>
          Create user
        </button>
      </form>
      <ErrorMessage error={formError ?? action.error} />
    </section>
  );
}
