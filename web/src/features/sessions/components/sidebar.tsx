import { timestampMs } from "@bufbuild/protobuf/wkt";
import { useEffect, useMemo, useRef, useState, type KeyboardEvent } from "react";
import { Link, useMatch, useNavigate } from "react-router";
import { SessionStatus } from "../../../gen/agents/v1/session_pb";
import { RelativeTime, useNow } from "../../../components/relative-time";
import { StatusBadge, statusLabel } from "../../../components/status-badge";
import { useShortcut } from "../../../lib/shortcuts";
import { flatten, sessionTree, type SessionFilter, type SessionNode } from "../api/session-list";
import { useRevealSessions } from "../hooks/use-reveal-sessions";
import { useSessionList } from "../hooks/use-session-list";

const statuses = [
  SessionStatus.READY,
  SessionStatus.RUNNING,
  SessionStatus.WAITING,
  SessionStatus.PAUSED,
  SessionStatus.FAILED,
];

// The id of the sidebar's search field, for the `/` shortcut.
export const sessionSearchId = "session-search";

// Sidebar lists the sessions, kept live by the event stream: sub-sessions
// under their parent, unread ones marked, filtered by agent, status and
// text.
export function Sidebar() {
  const openId = useMatch("/sessions/:id/*")?.params.id;
  const list = useSessionList(openId);
  const [filter, setFilter] = useState<SessionFilter>({});
  const now = useNow();
  const navigate = useNavigate();
  const search = useRef<HTMLInputElement>(null);
  const listRef = useRef<HTMLUListElement>(null);
  const reveal = useRevealSessions();

  const agents = useMemo(() => [...new Set([...list.metas.values()].map((m) => m.agent))].sort(), [list.metas]);
  useEffect(() => {
    document.title = list.unread.size > 0 ? `(${list.unread.size}) agents` : "agents";
  }, [list.unread.size]);
  const { metas, unread } = list;
  const tree = useMemo(() => sessionTree({ metas, unread }, filter), [metas, unread, filter]);
  const shown = useMemo(() => flatten(tree).length, [tree]);
  const filtering = !!(filter.agent || filter.status || filter.text?.trim());

  useShortcut({ keys: "n", description: "New session", group: "Sessions", run: () => navigate("/", { state: { focusPicker: true } }) });
  useShortcut({ keys: "/", description: "Search sessions", group: "Sessions", run: () => reveal(() => search.current?.focus()) });
  useShortcut({
    keys: "g s",
    description: "Go to the session list",
    group: "Sessions",
    run: () =>
      reveal(() => {
        const el = listRef.current;
        (el?.querySelector<HTMLElement>('[aria-current="page"]') ?? el?.querySelector<HTMLElement>("a"))?.focus();
      }),
  });
  useShortcut({ keys: "g h", description: "Go home", group: "Sessions", run: () => navigate("/") });

  return (
    <nav aria-label="Sessions" className="sidebar">
      <div className="sidebar-head">
        <Link to="/" className="button primary" state={{ focusPicker: true }}>
          New session
        </Link>
      </div>
      <div role="search" className="sidebar-filters">
        <label htmlFor={sessionSearchId} className="visually-hidden">
          Search sessions
        </label>
        <input
          ref={search}
          id={sessionSearchId}
          type="search"
          placeholder="Search sessions  /"
          value={filter.text ?? ""}
          onChange={(e) => setFilter({ ...filter, text: e.target.value })}
          onKeyDown={(e) => {
            if (e.key === "Escape") {
              setFilter({ ...filter, text: "" });
              e.currentTarget.blur();
            }
          }}
        />
        <div className="sidebar-selects">
          <select
            aria-label="Filter by agent"
            value={filter.agent ?? ""}
            onChange={(e) => setFilter({ ...filter, agent: e.target.value || undefined })}
          >
            <option value="">All agents</option>
            {agents.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
          <select
            aria-label="Filter by status"
            value={filter.status ?? ""}
            onChange={(e) => setFilter({ ...filter, status: e.target.value ? (Number(e.target.value) as SessionStatus) : undefined })}
          >
            <option value="">Any status</option>
            {statuses.map((s) => (
              <option key={s} value={s}>
                {statusLabel(s)}
              </option>
            ))}
          </select>
        </div>
      </div>
      <div className="sidebar-body">
        {list.error && !list.loaded ? (
          <p className="sidebar-note error" role="alert">
            Could not list the sessions: {list.error.message}{" "}
            <button type="button" className="button link" onClick={list.refetch}>
              Retry
            </button>
          </p>
        ) : !list.loaded ? (
          <p className="sidebar-note">Loading sessions…</p>
        ) : shown === 0 ? (
          <p className="sidebar-note">{filtering ? "No session matches." : "No sessions yet."}</p>
        ) : (
          <ul
            ref={listRef}
            className="session-list"
            aria-label={filtering ? `Sessions, ${shown} shown` : "Sessions"}
            onKeyDown={moveFocus}
          >
            {tree.map((n) => (
              <SessionItem key={n.meta.id} node={n} openId={openId} now={now} />
            ))}
          </ul>
        )}
      </div>
      <p className="visually-hidden" aria-live="polite">
        {list.unread.size > 0 ? `${list.unread.size} unread` : ""}
      </p>
    </nav>
  );
}

// moveFocus lets the arrow keys walk the session links (Tab still works).
function moveFocus(e: KeyboardEvent<HTMLUListElement>) {
  const step = e.key === "ArrowDown" || e.key === "j" ? 1 : e.key === "ArrowUp" || e.key === "k" ? -1 : 0;
  const edge = e.key === "Home" ? "first" : e.key === "End" ? "last" : undefined;
  if (!step && !edge) return;
  const links = [...e.currentTarget.querySelectorAll<HTMLAnchorElement>("a.session-row")];
  if (links.length === 0) return;
  const at = links.indexOf(document.activeElement as HTMLAnchorElement);
  const next = edge === "first" ? 0 : edge === "last" ? links.length - 1 : Math.min(Math.max(at + step, 0), links.length - 1);
  e.preventDefault();
  links[next].focus();
}

function SessionItem({ node, openId, now }: { node: SessionNode; openId?: string; now: number }) {
  const m = node.meta;
  const open = m.id === openId;
  const title = m.title.trim() || "Untitled session";
  return (
    <li>
      <Link
        to={`/sessions/${m.id}`}
        className={`session-row${open ? " open" : ""}${node.unread ? " unread" : ""}`}
        aria-current={open ? "page" : undefined}
      >
        <span className="session-title">
          {node.unread && <span className="unread-dot" aria-hidden="true" />}
          <span className="session-title-text">{title}</span>
          {node.unread && <span className="visually-hidden"> (unread)</span>}
        </span>
        <span className="session-meta">
          <StatusBadge status={m.status} reason={m.statusReason} />
          <span className="session-agent">{m.agent}</span>
          {m.updateTime && <RelativeTime ms={timestampMs(m.updateTime)} now={now} />}
        </span>
      </Link>
      {node.children.length > 0 && (
        <ul className="session-children" aria-label={`Sub-sessions of ${title}`}>
          {node.children.map((c) => (
            <SessionItem key={c.meta.id} node={c} openId={openId} now={now} />
          ))}
        </ul>
      )}
    </li>
  );
}
