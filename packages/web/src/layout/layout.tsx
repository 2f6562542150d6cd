import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import type { Identity } from '../auth/token.ts';
import { signOut } from '../auth/session.ts';
import type { Section } from '../sections.ts';

function isCurrent(path: string, section: string): boolean {
  return path === section || path.startsWith(`${section}/`);
}

/** Header, navigation and the main region every signed-in page shares. */
export function Layout(props: { identity: Identity; sections: Section[]; children: ComponentChildren }) {
  const { path } = useLocation();
  const { identity } = props;
  const visible = props.sections.filter((s) => !s.adminOnly || identity.role === 'admin');
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
          <button type="button" class="button-quiet" onClick={() => signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <nav class="nav" aria-label="Sections">
        <ul>
          {visible.map((s) => (
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
