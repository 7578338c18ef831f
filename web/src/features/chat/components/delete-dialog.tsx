import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useEffect, useRef } from "react";
import { DeleteMode, SessionService } from "../../../gen/agents/v1/session_service_pb";
import type { SessionMeta } from "../../../gen/agents/v1/session_pb";
import { errorText } from "../../../lib/error-text";

interface Props {
  meta: SessionMeta;
  onClose: () => void;
  onDeleted: () => void;
}

// DeleteDialog confirms a delete. A session with sub-sessions is deleted
// with them (cascade), and the dialog names them.
export function DeleteDialog({ meta, onClose, onDeleted }: Props) {
  const children = useQuery(SessionService.method.listSessions, { parentId: meta.id, pageSize: 50 });
  const del = useMutation(SessionService.method.deleteSession, { onSuccess: onDeleted });
  const kids = children.data?.sessions ?? [];
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    cancel.current?.focus();
  }, []);
  const title = meta.title || meta.id;
  return (
    <div className="dialog-backdrop">
      <div
        className="dialog"
        role="alertdialog"
        aria-modal="true"
        aria-labelledby="delete-title"
        aria-describedby="delete-desc"
        onKeyDown={(e) => {
          if (e.key === "Escape") onClose();
        }}
      >
        <h2 id="delete-title">Delete this session?</h2>
        <div id="delete-desc">
          <p>
            “{title}” and its history are deleted for good{meta.status === 2 ? "; its run is cancelled first" : ""}.
          </p>
          {children.isPending && <p className="muted">Looking for sub-sessions…</p>}
          {kids.length > 0 && (
            <>
              <p>
                Its {kids.length}
                {children.data?.nextPageToken ? "+" : ""} sub-session{kids.length === 1 ? "" : "s"} go with it:
              </p>
              <ul>
                {kids.map((k) => (
                  <li key={k.id}>
                    {k.agent}: {k.title || k.id}
                  </li>
                ))}
              </ul>
            </>
          )}
        </div>
        {del.error && (
          <p role="alert" className="error-text">
            {errorText(del.error)}
          </p>
        )}
        <div className="row">
          <button ref={cancel} type="button" onClick={onClose}>
            Cancel
          </button>
          <button
            type="button"
            className="danger"
            disabled={del.isPending || children.isPending}
            onClick={() => del.mutate({ sessionId: meta.id, mode: kids.length > 0 ? DeleteMode.CASCADE : DeleteMode.SINGLE })}
          >
            {kids.length > 0 ? `Delete with ${kids.length} sub-session${kids.length === 1 ? "" : "s"}` : "Delete session"}
          </button>
        </div>
      </div>
    </div>
  );
}
