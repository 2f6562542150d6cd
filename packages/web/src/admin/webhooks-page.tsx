import { WEBHOOK_EVENT_TYPES, type WebhookDelivery, type WebhookSubscription } from '@svc/protocol';
import { useState } from 'preact/hooks';
import { formatDate } from '../ui/format.ts';
import {
  type CreatedWebhook,
  createWebhook,
  deleteWebhook,
  listDeliveries,
  listWebhooks,
  pingWebhook,
  redeliverWebhook,
  updateWebhook,
} from '../api/webhooks.ts';
import { draftWebhook, type WebhookForm } from './forms.ts';
import { SecretOnce, useCreateForm } from './ui.tsx';
import { useAction } from '../ui/use-action.ts';
import { useData } from '../ui/use-load.ts';
import { ConfirmButton } from '../ui/confirm.tsx';
import { usePages } from '../ui/pager.tsx';
import { ErrorMessage, LoadError, Notice } from '../ui/alert.tsx';
import { DataTable } from '../ui/table-wrap.tsx';
import { Page } from '../ui/page.tsx';

const EMPTY: WebhookForm = { url: '', event_types: [], description: '', client_id: '' };
const DELIVERY_LIMIT = 200;

/** Webhooks: subscribe (signing secret shown once), enable/disable, ping, delivery log with redelivery, delete. */
export function WebhooksPage() {
  const list = useData(listWebhooks, []);
  const action = useAction();
  const [notice, setNotice] = useState<string | null>(null);
  const [created, setCreated] = useState<CreatedWebhook | null>(null);
  const [logOf, setLogOf] = useState<string | null>(null);
  const subs = list.data?.subscriptions ?? [];
  const { page, controls: pager } = usePages(subs, 'Webhook subscriptions');

  const run = async (message: string, call: () => Promise<unknown>) => {
    setNotice(null);
    if (await action.run(call)) {
      setNotice(message);
      list.reload();
    }
  };
  const ping = async (s: WebhookSubscription) => {
    setNotice(null);
    let delivery: WebhookDelivery | null = null;
    const ok = await action.run(async () => {
      delivery = (await pingWebhook(s.id)).delivery;
    });
    if (ok && delivery !== null) {
      const d = delivery as WebhookDelivery;
      setNotice(`Ping to ${s.url}: ${d.status}${attemptSummary(d)}`);
      setLogOf(s.id);
      list.reload();
    }
  };

  return (
    <Page title="Webhooks">
      <div class="adm-page">
        <CreateWebhook
          onCreated={(s) => {
            setCreated(s);
            list.reload();
          }}
        />
        {created && (
          <section aria-labelledby="wh-created">
            <h2 id="wh-created">Signing secret of {created.url}</h2>
            <SecretOnce
              id="webhook-secret"
              label="Signing secret (X-SVC-Signature-256 key)"
              value={created.signing_secret}
            />
            <SecretOnce
              id="webhook-standard-secret"
              label="Standard Webhooks secret"
              value={created.standard_webhooks_secret}
            />
            <button type="button" onClick={() => setCreated(null)}>
              I have stored the secret
            </button>
          </section>
        )}
        <section aria-labelledby="wh-list">
          <h2 id="wh-list">Subscriptions</h2>
          <LoadError load={list} />
          <ErrorMessage error={action.error} />
          {notice && <Notice>{notice}</Notice>}
          {list.data && subs.length === 0 && <p>No subscriptions.</p>}
          {page.items.length > 0 && (
            <DataTable
              label="Webhook subscriptions"
              columns={['URL', 'Events', 'Client', 'State', 'Actions']}
              stack={{ lead: ['State', 'URL'] }}
            >
              {page.items.map((s) => (
                <tr key={s.id} data-webhook={s.id}>
                  <th scope="row">
                    <span class="adm-break">{s.url}</span>
                    {s.description ? <div class="adm-hint">{s.description}</div> : null}
                  </th>
                  <td>{s.event_types.join(', ')}</td>
                  <td>{s.client_id ?? 'all'}</td>
                  <td>
                    <span class={`adm-badge adm-status-${s.enabled ? 'active' : 'inactive'}`}>
                      {s.enabled ? 'enabled' : 'disabled'}
                    </span>
                    {s.disabled_reason ? <div class="adm-hint">{s.disabled_reason}</div> : null}
                    {s.consecutive_failures > 0 ? (
                      <div class="adm-hint">Failed deliveries in a row: {s.consecutive_failures}</div>
                    ) : null}
                  </td>
                  <td>
                    <div class="adm-actions">
                      <button type="button" disabled={action.busy} onClick={() => ping(s)}>
                        Ping
                      </button>
                      <button type="button" aria-pressed={logOf === s.id} onClick={() => setLogOf(s.id)}>
                        Deliveries
                      </button>
                      {s.enabled ? (
                        <ConfirmButton
                          label="Disable"
                          question={`Disable deliveries to ${s.url}?`}
                          disabled={action.busy}
                          onConfirm={() => run(`Disabled ${s.url}`, () => updateWebhook(s.id, { enabled: false }))}
                        />
                      ) : (
                        <button
                          type="button"
                          disabled={action.busy}
                          onClick={() => run(`Re-enabled ${s.url}`, () => updateWebhook(s.id, { enabled: true }))}
                        >
                          Re-enable
                        </button>
                      )}
                      <ConfirmButton
                        label="Delete"
                        question={`Delete the subscription to ${s.url} and its delivery log?`}
                        disabled={action.busy}
                        onConfirm={() => {
                          if (logOf === s.id) setLogOf(null);
                          return run(`Deleted ${s.url}`, () => deleteWebhook(s.id));
                        }}
                      />
                    </div>
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
          {pager}
        </section>
        {logOf !== null && (
          <DeliveryLog
            subscription={subs.find((s) => s.id === logOf) ?? null}
            id={logOf}
            version={notice}
            onDelivered={list.reload}
            onClose={() => setLogOf(null)}
          />
        )}
      </div>
    </Page>
  );
}

function attemptSummary(d: WebhookDelivery): string {
  const last = d.attempts.at(-1);
  if (!last) return '';
  return last.status_code !== null ? ` (HTTP ${last.status_code})` : last.error ? ` (${last.error})` : '';
}

function DeliveryLog(props: {
  subscription: WebhookSubscription | null;
  id: string;
  /** Changes after each action on the page, so the log reloads. */
  version: string | null;
  /** A redelivery changes the subscription's failure count. */
  onDelivered: () => void;
  onClose: () => void;
}) {
  const log = useData(() => listDeliveries(props.id, DELIVERY_LIMIT), [props.id, props.version]);
  const action = useAction();
  const [notice, setNotice] = useState<string | null>(null);
  const { page, controls: pager } = usePages(log.data?.deliveries ?? [], 'Delivery log');
  const redeliver = async (d: WebhookDelivery) => {
    setNotice(null);
    let answer: WebhookDelivery | null = null;
    const ok = await action.run(async () => {
      answer = (await redeliverWebhook(d.id)).delivery;
    });
    if (ok && answer !== null) {
      const a = answer as WebhookDelivery;
      setNotice(`Redelivered ${d.event_id}: ${a.status}${attemptSummary(a)}`);
      log.reload();
      props.onDelivered();
    }
  };
  return (
    <section aria-labelledby="wh-log">
      <div class="adm-row">
        <h2 id="wh-log">Deliveries to {props.subscription?.url ?? props.id}</h2>
        <button type="button" onClick={log.reload}>
          Refresh
        </button>
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </div>
      <LoadError load={log} />
      <ErrorMessage error={action.error} />
      {notice && <Notice>{notice}</Notice>}
      {log.data && page.total === 0 && <p>No deliveries yet.</p>}
      {page.items.length > 0 && (
        <DataTable
          label="Delivery log"
          columns={['Event', 'Status', 'Attempts', 'Created', 'Actions']}
          stack={{ lead: ['Status', 'Event'] }}
        >
          {page.items.map((d) => (
            <tr key={d.id} data-delivery={d.id}>
              <th scope="row">
                {d.event_type}
                <div class="adm-hint">
                  {d.event_id}
                  {d.redelivery_of !== null ? ` · redelivery of #${d.redelivery_of}` : ''}
                  {d.runs > 1 ? ` · run ${d.runs}: taken over after the replica sending it stopped` : ''}
                </div>
              </th>
              <td>
                <span class={`adm-badge adm-status-${d.status}`}>{d.status}</span>
              </td>
              <td>
                {d.attempts.map((a) => (
                  <div key={a.attempt}>
                    #{a.attempt}: {a.status_code !== null ? `HTTP ${a.status_code}` : (a.error ?? 'no answer')}
                    {a.duration_ms !== null ? `, ${a.duration_ms} ms` : ''}
                  </div>
                ))}
              </td>
              <td>{formatDate(d.created_at)}</td>
              <td>
                <button type="button" disabled={action.busy} onClick={() => redeliver(d)}>
                  Redeliver
                </button>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      {pager}
    </section>
  );
}

function CreateWebhook(props: { onCreated: (s: CreatedWebhook) => void }) {
  const { form, setForm, formError, action, submit } = useCreateForm(
    EMPTY,
    draftWebhook,
    async (body) => (await createWebhook(body)).subscription,
    props.onCreated,
  );
  const toggle = (type: string, on: boolean) =>
    setForm({ ...form, event_types: on ? [...form.event_types, type] : form.event_types.filter((t) => t !== type) });
  return (
    <section aria-labelledby="wh-create">
      <h2 id="wh-create">Subscribe</h2>
      <form class="adm-form" onSubmit={submit} aria-labelledby="wh-create" noValidate>
        <label>
          HTTPS URL
          <input
            type="url"
            value={form.url}
            onInput={(e) => setForm({ ...form, url: e.currentTarget.value })}
            required
          />
        </label>
        <label>
          Description (optional)
          <input value={form.description} onInput={(e) => setForm({ ...form, description: e.currentTarget.value })} />
        </label>
        <label>
          Client id (optional)
          <input value={form.client_id} onInput={(e) => setForm({ ...form, client_id: e.currentTarget.value })} />
        </label>
        <fieldset>
          <legend>Events</legend>
          {WEBHOOK_EVENT_TYPES.map((t) => (
            <label key={t} class="adm-check">
              <input
                type="checkbox"
                checked={form.event_types.includes(t)}
                onChange={(e) => toggle(t, e.currentTarget.checked)}
              />
              {t}
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={action.busy}>
          Subscribe
        </button>
      </form>
      <ErrorMessage error={formError ?? action.error} />
    </section>
  );
}
