import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import type { Identity } from '../auth/token.ts';
import { useState } from 'preact/hooks';
import { describeError } from '../api/errors.ts';
import { signOutAndRevoke } from '../auth/session.ts';
import { signOutEverywhere } from '../auth/sign-out-everywhere.ts';
import type { Section } from '../sections.ts';

function isCurrent(path: string, section: string): boolean {
  return path === section || path.startsWith(`${section}/`);
}

/** Header, navigation (the sections the user may open) and the main region every signed-in page shares. */
export function Layout(props: { identity: Identity; sections: Section[]; children: ComponentChildren }) {
  const { path } = useLocation();
  const { identity } = props;
  const [signOutError, setSignOutError] = useState<string | null>(null);
  const everywhere = () => {
    setSignOutError(null);
    signOutEverywhere().catch((err: unknown) => setSignOutError(describeError(err)));
  };
  return (
    <div class="shell">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <a class="brand" href="/console/sessions">
          Scan portal
        </a>
        <div class="who">
          <span
            class="who-name"
            title={identity.clientIds.length > 0 ? `Clients: ${identity.clientIds.join(', ')}` : ''}
          >
            {identity.email || identity.subject}
            {identity.role === 'member' ? ` (${identity.clientIds.join(', ') || 'no clients'})` : ''}
          </span>
          <button type="button" class="button-quiet" onClick={() => void signOutAndRevoke()}>
            Sign out
          </button>
          <button type="button" class="button-quiet" onClick={everywhere}>
            Sign out everywhere
          </button>
          {signOutError !== null && (
            <span class="alert alert-error" role="alert">
              {signOutError}
            </span>
          )}
        </div>
      </header>
      <nav class="nav" aria-label="Sections">
        <ul>
          {props.sections.map((s) => (
            <li key={s.path}>
              <a
                href={s.path}
                aria-current={
                  isCurrent(path, s.path) || (s.path === '/console/sessions' && path.startsWith('/collect'))
                    ? 'page'
                    : undefined
                }
              >
                {s.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {props.children}
      </main>
    </div>
  );
}
