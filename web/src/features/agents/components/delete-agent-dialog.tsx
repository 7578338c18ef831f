import { createConnectQueryKey, useMutation } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef } from "react";
import { AgentService, type AgentDescriptor } from "../../../gen/agents/v1/agent_pb";
import { errorText } from "../../../lib/error-text";

interface Props {
  agent: AgentDescriptor;
  onClose: () => void;
  // onSending says the delete is under way (true) or failed (false): the
  // agent's page stops reading the agent meanwhile, which would be gone.
  onSending: (sending: boolean) => void;
  onDeleted: () => void;
}

// DeleteAgentDialog confirms deleting a stored agent: its sessions stay
// readable, new ones with it are refused, its versions stay listed.
export function DeleteAgentDialog({ agent, onClose, onSending, onDeleted }: Props) {
  const queryClient = useQueryClient();
  const del = useMutation(AgentService.method.deleteAgent, {
    onMutate: () => onSending(true),
    onError: () => onSending(false),
    onSuccess: async () => {
      onDeleted();
      await queryClient.invalidateQueries({ queryKey: createConnectQueryKey({ schema: AgentService, cardinality: undefined }) });
    },
  });
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => cancel.current?.focus(), []);
  return (
    <div className="dialog-backdrop">
      <div
        className="dialog confirm"
        role="alertdialog"
        aria-modal="true"
        aria-labelledby="delete-agent-title"
        aria-describedby="delete-agent-desc"
        onKeyDown={(e) => {
          if (e.key === "Escape") onClose();
        }}
      >
        <h2 id="delete-agent-title">Delete the agent {agent.slug}?</h2>
        <p id="delete-agent-desc">
          Its sessions stay readable, but new sessions with it and messages to its sessions are refused. An agent another stored agent names as a helper is not deleted. Its {String(agent.version)} version
          {agent.version === 1n ? "" : "s"} stay listed; an agent created again as {agent.slug} goes on from them.
        </p>
        {del.error && (
          <p role="alert" className="error">
            {errorText(del.error)}
          </p>
        )}
        <div className="actions">
          <button ref={cancel} type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <button
            type="button"
            className="button danger"
            disabled={del.isPending}
            onClick={() => del.mutate({ slug: agent.slug, expectedVersion: agent.version })}
          >
            Delete the agent
          </button>
        </div>
      </div>
    </div>
  );
}
