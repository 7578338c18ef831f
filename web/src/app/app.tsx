import { useEffect, useRef, useState, type KeyboardEvent, type MouseEvent } from "react";
import { Link, NavLink, Route, Routes, useLocation, useNavigate } from "react-router";
import { MenuButton } from "../components/menu-button";
import { ShortcutHelpDialog } from "../components/shortcut-help-dialog";
import { EditAgentPage, NewAgentPage } from "../features/agents/components/agent-editor";
import { AgentPage } from "../features/agents/components/agent-page";
import { AgentVersionsPage } from "../features/agents/components/agent-versions";
import { AgentsPage } from "../features/agents/components/agents-page";
import { SignIn } from "../features/auth/components/sign-in";
import { UsagePage } from "../features/budgets/components/usage-page";
import { SignOutButton } from "../features/auth/components/sign-out-button";
import { useAuth } from "../features/auth/hooks/use-auth";
import { ChatPage } from "../features/chat/components/chat-page";
import { EditSchedulePage, NewSchedulePage } from "../features/schedules/components/schedule-editor";
import { SchedulePage } from "../features/schedules/components/schedule-page";
import { SchedulesPage } from "../features/schedules/components/schedules-page";
import { NewWebhookPage } from "../features/webhooks/components/new-webhook";
import { WebhookPage } from "../features/webhooks/components/webhook-page";
import { WebhooksPage } from "../features/webhooks/components/webhooks-page";
import { Home } from "../features/sessions/components/home";
import { Sidebar } from "../features/sessions/components/sidebar";
import { RevealSessions } from "../features/sessions/hooks/use-reveal-sessions";
import { useBudgetsSupported } from "../lib/budgets-supported";
import { narrowScreen, useMediaQuery } from "../lib/media-query";
import { newSchedulePath, newWebhookPath, schedulesPath, webhooksPath } from "../lib/paths";
import { shortcuts, useShortcut } from "../lib/shortcuts";
import { ConnectionStatus } from "./connection-status";

// App is the layout: a bar with the connection state, the sessions on the
// side, the open page beside them. On a narrow screen the sessions are a
// drawer the bar opens, so the page has the screen. A server that asks
// for a token gets the sign-in form first.
export function App() {
  const auth = useAuth();
  const [help, setHelp] = useState(false);
  const narrow = useMediaQuery(narrowScreen);
  const { pathname } = useLocation();
  // The drawer is open on the page it was opened on: going to another
  // page closes it.
  const [drawerAt, setDrawerAt] = useState<string>();
  const drawer = narrow && drawerAt === pathname;
  const toggle = useRef<HTMLButtonElement>(null);
  // Asked once signed in, where the server asks for a token.
  const budgets = useBudgetsSupported(!(auth.required && !auth.token));
  useEffect(() => shortcuts.install(), []);
  useShortcut({ keys: "?", description: "Show the keyboard shortcuts", run: () => setHelp(true) });

  // Opened, the drawer takes the focus (where a shortcut that opened it
  // asked, or its first control); closed, the button gets it back.
  const focusOnOpen = useRef<() => void>(undefined);
  useEffect(() => {
    if (!drawer) return;
    const focus = focusOnOpen.current;
    focusOnOpen.current = undefined;
    if (focus) focus();
    else document.getElementById(sessionsId)?.querySelector<HTMLElement>("a, button, input")?.focus();
  }, [drawer]);
  const revealSessions = (focus: () => void) => {
    if (!narrow || drawer) return focus();
    focusOnOpen.current = focus;
    setDrawerAt(pathname);
  };
  const closeDrawer = () => {
    setDrawerAt(undefined);
    toggle.current?.focus();
  };
  const onDrawerKey = (e: KeyboardEvent) => {
    if (drawer && e.key === "Escape") closeDrawer();
  };
  // A link followed in the drawer closes it, even to the page it shows.
  const onDrawerClick = (e: MouseEvent) => {
    if (drawer && (e.target as Element).closest("a")) setDrawerAt(undefined);
  };

  if (auth.required && !auth.token) return <SignIn />;
  return (
    <div className={`layout${narrow ? " narrow" : ""}${drawer ? " drawer-open" : ""}`}>
      <a href="#main" className="skip-link">
        Skip to content
      </a>
      <header className="topbar">
        {narrow && (
          <button
            ref={toggle}
            type="button"
            className="button icon drawer-toggle"
            aria-label="Sessions"
            aria-expanded={drawer}
            aria-controls={sessionsId}
            onClick={() => setDrawerAt(drawer ? undefined : pathname)}
          >
            <span aria-hidden="true">☰</span>
          </button>
        )}
        <Link to="/" className="brand">
          agents
        </Link>
        <ConnectionStatus />
        <div className="topbar-actions">
          <NavLink to="/agents" className="button">
            Agents
          </NavLink>
          {narrow ? (
            <>
              {budgets && (
                <NavLink to="/usage" className="button">
                  Usage
                </NavLink>
              )}
              <MorePages
                pages={[
                  { label: "Schedules", path: schedulesPath },
                  { label: "Webhooks", path: webhooksPath },
                ]}
              />
            </>
          ) : (
            <>
              <NavLink to={schedulesPath} className="button">
                Schedules
              </NavLink>
              <NavLink to={webhooksPath} className="button">
                Webhooks
              </NavLink>
              {budgets && (
                <NavLink to="/usage" className="button">
                  Usage
                </NavLink>
              )}
            </>
          )}
          {!narrow && (
            <button type="button" className="button" onClick={() => setHelp(true)} aria-keyshortcuts="?">
              Shortcuts
            </button>
          )}
          <SignOutButton />
        </div>
      </header>
      <div className="sidebar-frame" id={sessionsId} onKeyDown={onDrawerKey} onClick={onDrawerClick}>
        <RevealSessions.Provider value={revealSessions}>
          <Sidebar />
        </RevealSessions.Provider>
      </div>
      {drawer && <div className="drawer-backdrop" aria-hidden="true" onClick={closeDrawer} />}
      <main id="main" className="page" tabIndex={-1}>
        <Routes>
          <Route path="/" element={<Home />} />
          <Route path="/sessions/:id/*" element={<ChatPage />} />
          <Route path="/agents" element={<AgentsPage />} />
          <Route path="/agents/+new" element={<NewAgentPage />} />
          <Route path="/agents/:slug" element={<AgentPage />} />
          <Route path="/agents/:slug/edit" element={<EditAgentPage />} />
          <Route path="/agents/:slug/versions" element={<AgentVersionsPage />} />
          <Route path={schedulesPath} element={<SchedulesPage />} />
          <Route path={newSchedulePath} element={<NewSchedulePage />} />
          <Route path="/schedules/:id" element={<SchedulePage />} />
          <Route path="/schedules/:id/edit" element={<EditSchedulePage />} />
          <Route path={webhooksPath} element={<WebhooksPage />} />
          <Route path={newWebhookPath} element={<NewWebhookPage />} />
          <Route path="/webhooks/:id" element={<WebhookPage />} />
          <Route path="/usage" element={<UsagePage />} />
          <Route path="*" element={<NotFound />} />
        </Routes>
      </main>
      <ShortcutHelpDialog open={help} onClose={() => setHelp(false)} />
    </div>
  );
}

// The id of the element that holds the session list (the drawer).
const sessionsId = "sessions";

// MorePages is the bar's menu of the pages a phone's bar has no room
// for beside the others, so it stays one line; it is marked as the
// current page's while one of them is open.
function MorePages({ pages }: { pages: { label: string; path: string }[] }) {
  const navigate = useNavigate();
  const { pathname } = useLocation();
  const current = pages.some((p) => pathname === p.path || pathname.startsWith(`${p.path}/`));
  return (
    <MenuButton
      label="More"
      buttonClassName={`button${current ? " current" : ""}`}
      items={pages.map((p) => ({ label: p.label, onSelect: () => navigate(p.path) }))}
    />
  );
}

function NotFound() {
  return (
    <section className="page-content">
      <h1>Not found</h1>
      <p>
        Nothing here. <Link to="/">Start a session</Link>.
      </p>
    </section>
  );
}
