import { LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { useEffect } from 'preact/hooks';
import { adminSections } from './admin/index.ts';
import { identity } from './auth/session.ts';
import { SignIn } from './auth/sign-in.tsx';
import { fleetSections } from './fleet/index.ts';
import { Layout } from './layout/layout.tsx';
import { OverviewPage } from './overview/overview-page.tsx';
import type { Section } from './sections.ts';
import { SessionsPage } from './sessions/list-page.tsx';
import { SessionViewPage } from './sessions/view-page.tsx';
import { Page } from './ui/page.tsx';

const SECTIONS: Section[] = [
  { path: '/console/overview', label: 'Overview', component: OverviewPage },
  { path: '/console/sessions', label: 'Sessions', component: SessionsPage },
  ...fleetSections,
  ...adminSections,
];

/** `/console/` itself opens the overview. */
function Home() {
  const { route } = useLocation();
  useEffect(() => route('/console/overview', true), [route]);
  return null;
}

function NotFound() {
  return (
    <Page title="Page not found">
      <p>
        There is no console page at this address. <a href="/console/sessions">Go to the sessions</a>.
      </p>
    </Page>
  );
}

function Console() {
  const who = identity.value;
  // Signed out: the sign-in form at the same address, which shows once signed in.
  if (who === null) return <SignIn />;
  return (
    <Layout identity={who} sections={SECTIONS}>
      <Router>
        <Route path="/console" component={Home} />
        <Route path="/collect" component={SessionViewPage} />
        {SECTIONS.map((s) => (
          <Route key={s.path} path={`${s.path}/*`} component={s.component} />
        ))}
        {SECTIONS.map((s) => (
          <Route key={`${s.path}$`} path={s.path} component={s.component} />
        ))}
        <Route default component={NotFound} />
      </Router>
    </Layout>
  );
}

export function App() {
  return (
    <LocationProvider>
      <Console />
    </LocationProvider>
  );
}
