import { Route, Routes } from "react-router";
import { AgentPage } from "../features/agents/components/agent-page";
import { ChatPage } from "../features/chat/components/chat-page";
import { Home } from "../features/sessions/components/home";
import { Sidebar } from "../features/sessions/components/sidebar";

// App is the layout: the sessions on the side, the open page beside them.
export function App() {
  return (
    <div className="layout">
      <Sidebar />
      <main className="page">
        <Routes>
          <Route path="/" element={<Home />} />
          <Route path="/sessions/:id/*" element={<ChatPage />} />
          <Route path="/agents/:slug" element={<AgentPage />} />
        </Routes>
      </main>
    </div>
  );
}
