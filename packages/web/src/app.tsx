import { createContext, type FunctionComponent } from 'preact';
import { LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { useContext, useEffect } from 'preact/hooks';
import { adminSections } from './admin/index.ts';
import { ChangesPage } from './changes/changes-page.tsx';
import { CallerContext, useCaller } from './auth/access.ts';
import { sectionsFor } from './auth/section-access.ts';
import { identity } from './auth/session.ts';
import { SignIn } from './auth/sign-in.tsx';
import { fleetSections } from './fleet/index.ts';
import { Layout } from './layout/layout.tsx';
import { OverviewPage } from './overview/overview-page.tsx';
import { PortfolioPage } from './portfolio/portfolio-page.tsx';
import type { Section } from './sections.ts';
import { SessionsPage } from './sessions/list-page.tsx';
import { SessionViewPage } from './sessions/view-page.tsx';
import { Page } from './ui/page.tsx';

const SECTIONS: Section[] = [
  { path: '/console/overview', label: 'Overview', component: OverviewPage },
  { path: '/console/sessions', label: 'Sessions', component: SessionsPage },
  { path: '/console/findings', label: 'Findings', component: PortfolioPage },
  { path: '/console/changes', label: 'What changed', component: ChangesPage },
  ...fleetSections,
  ...adminSections,
];

/** `/console/` itself opens the overview. */
function Home() {
  const { route } = useLocation();
  useEffect(() => route('/console/overview', true), [route]);
  return null;
}

/** A page that only says why there is nothing here, with the way back. */
function Plain({ title, text }: { title: string; text: string }) {
  return (
    <Page title={title}>
      <p>
        {text} <a href="/console/sessions">Go to the sessions</a>.
      </p>
    </Page>
  );
}

const NotFound = () => <Plain title="Page not found" text="There is no console page at this address." />;

/** A section the signed-in user may not use: said plainly, whatever the address. */
const NotAvailable = () => <Plain title="Not available" text="This page is not available for your account." />;

function Checking() {
  return <p role="status">Checking your access…</p>;
}

function Console() {
  const who = identity.value;
  // Signed out: the sign-in form at the same address, which shows once signed in.
  if (who === null) return <SignIn />;
  return <SignedIn who={who} />;
}

/** What the signed-in user may open, as far as the portal has answered yet. */
const Access = createContext<{ open: readonly Section[]; known: boolean }>({ open: [], known: false });

/**
 * One stable route component per section: it reads the access from the context, so an answer
 * on access changes what the route shows without mounting anything else afresh (the session
 * view and an open form keep their state and loads).
 */
const GATES = new Map<Section, FunctionComponent>(
  SECTIONS.map((s) => [
    s,
    (props) => {
      const { open, known } = useContext(Access);
      if (open.includes(s)) return <s.component {...props} />;
      return known ? <NotAvailable /> : <Checking />;
    },
  ]),
);
const gateOf = (s: Section) => GATES.get(s) as FunctionComponent;

function SignedIn({ who }: { who: NonNullable<typeof identity.value> }) {
  const access = useCaller(who);
  const open = sectionsFor(SECTIONS, access.caller);
  // Every section has a route: one the user may not open shows why instead of its page.
  return (
    <Access.Provider value={{ open, known: access.known }}>
      <CallerContext.Provider value={access.caller}>
        <Layout identity={who} sections={open}>
          <Router>
            <Route path="/console" component={Home} />
            <Route path="/collect" component={SessionViewPage} />
            {SECTIONS.map((s) => (
              <Route key={s.path} path={`${s.path}/*`} component={gateOf(s)} />
            ))}
            {SECTIONS.map((s) => (
              <Route key={`${s.path}$`} path={s.path} component={gateOf(s)} />
            ))}
            <Route default component={NotFound} />
          </Router>
        </Layout>
      </CallerContext.Provider>
    </Access.Provider>
  );
}

export function App() {
  return (
    <LocationProvider>
      <Console />
    </LocationProvider>
  );
}
