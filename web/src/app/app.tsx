import { useEffect, useState } from "react";
import { Link, Route, Routes } from "react-router";
import { ShortcutHelpDialog } from "../components/shortcut-help-dialog";
import { AgentPage } from "../features/agents/components/agent-page";
import { SignIn } from "../features/auth/components/sign-in";
import { SignOutButton } from "../features/auth/components/sign-out-button";
import { useAuth } from "../features/auth/hooks/use-auth";
import { ChatPage } from "../features/chat/components/chat-page";
import { Home } from "../features/sessions/components/home";
import { Sidebar } from "../features/sessions/components/sidebar";
import { shortcuts, useShortcut } from "../lib/shortcuts";
import { ConnectionStatus } from "./connection-status";

// App is the layout: a bar with the connection state, the sessions on the
// side, the open page beside them. A server that asks for a token gets
// the sign-in form first.
export function App() {
  const auth = useAuth();
  const [help, setHelp] = useState(false);
  useEffect(() => shortcuts.install(), []);
  useShortcut({ keys: "?", description: "Show the keyboard shortcuts", run: () => setHelp(true) });

  if (auth.required && !auth.token) return <SignIn />;
  return (
    <div className="layout">
      <a href="#main" className="skip-link">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/" className="brand">
          agents
        </Link>
        <ConnectionStatus />
        <div className="topbar-actions">
          <button type="button" className="button" onClick={() => setHelp(true)} aria-keyshortcuts="?">
            Shortcuts
          </button>
          <SignOutButton />
        </div>
      </header>
      <Sidebar />
      <main id="main" className="page" tabIndex={-1}>
        <Routes>
          <Route path="/" element={<Home />} />
          <Route path="/sessions/:id/*" element={<ChatPage />} />
          <Route path="/agents/:slug" element={<AgentPage />} />
          <Route path="*" element={<NotFound />} />
        </Routes>
      </main>
      <ShortcutHelpDialog open={help} onClose={() => setHelp(false)} />
    </div>
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
