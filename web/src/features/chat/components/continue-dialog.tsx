import { useState } from "react";
import { Dialog } from "../../../components/dialog";
import type { AgentDescriptor } from "../../../gen/agents/v1/agent_pb";

interface Props {
  open: boolean;
  onClose: () => void;
  // The session's own agent, left out of the choice.
  current?: string;
  agents: AgentDescriptor[];
  // continueWith forks the session to the agent picked.
  continueWith: (agent: string) => void;
}

// ContinueDialog picks another agent to go on with the conversation: a
// fork of the session, with every turn, bound to that agent.
export function ContinueDialog({ open, onClose, current, agents, continueWith }: Props) {
  return (
    <Dialog open={open} onClose={onClose} title="Continue with another agent">
      {open && <ContinueForm onClose={onClose} current={current} agents={agents} continueWith={continueWith} />}
    </Dialog>
  );
}

function ContinueForm({ onClose, current, agents, continueWith }: Omit<Props, "open">) {
  const others = agents.filter((a) => a.slug !== current);
  const [agent, setAgent] = useState(others[0]?.slug ?? "");
  return (
    <form
      aria-label="Continue with another agent"
      onSubmit={(e) => {
        e.preventDefault();
        if (!agent) return;
        onClose();
        continueWith(agent);
      }}
    >
      <p className="muted">A new session gets every turn of this one, and the agent you pick answers from there. This session stays as it is.</p>
      {others.length === 0 ? (
        <p>There is no other agent to continue with.</p>
      ) : (
        <label>
          Agent to continue with{" "}
          <select value={agent} onChange={(e) => setAgent(e.target.value)} autoFocus>
            {others.map((a) => (
              <option key={a.slug} value={a.slug}>
                {a.slug}
              </option>
            ))}
          </select>
        </label>
      )}
      <div className="actions">
        <button type="submit" className="button primary" disabled={!agent}>
          Continue
        </button>
        <button type="button" className="button" onClick={onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}
