import { useState } from 'preact/hooks';
import { describeError } from '../api/errors.ts';
import { Page } from '../ui/page.tsx';
import { askingOtherTabs, endedBecause, signIn } from './session.ts';

/** Sign-in with the portal's identity provider (password grant). */
export function SignIn() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await signIn(email.trim(), password);
    } catch (err) {
      setError(describeError(err));
      setBusy(false);
    }
  }

  const notice = endedBecause.value;
  // A new tab asks the console's other tabs first (session.ts): no form flashes by meanwhile.
  if (askingOtherTabs.value)
    return (
      <main id="main" class="sign-in">
        <Page title="Signing in">
          <p aria-busy="true">Looking for a signed-in tab of the console…</p>
        </Page>
      </main>
    );
  return (
    <main id="main" class="sign-in">
      <Page title="Sign in">
        <p class="muted">Scan portal console</p>
        {notice !== null && error === null ? (
          <p class="alert" role="status">
            {notice}
          </p>
        ) : null}
        {error !== null ? (
          <p class="alert alert-error" role="alert">
            {error}
          </p>
        ) : null}
        <form onSubmit={submit} class="stack">
          <label>
            E-mail
            <input
              type="email"
              name="username"
              autoComplete="username"
              required
              value={email}
              onInput={(e) => setEmail(e.currentTarget.value)}
            />
          </label>
          <label>
            Password
            <input
              type="password"
              name="password"
              autoComplete="current-password"
              required
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
          </label>
          <button type="submit" disabled={busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
      </Page>
    </main>
  );
}
