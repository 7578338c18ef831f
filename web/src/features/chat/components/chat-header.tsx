import { useQuery } from "@connectrpc/connect-query";
import { useEffect, useId, useRef, useState, type ReactNode } from "react";
import { Link } from "react-router";
import { BudgetMeter } from "../../../components/budget-meter";
import { MenuButton, type MenuItem } from "../../../components/menu-button";
import type { AgentDescriptor } from "../../../gen/agents/v1/agent_pb";
import { SessionStatus, type SessionMeta } from "../../../gen/agents/v1/session_pb";
import { SessionService } from "../../../gen/agents/v1/session_service_pb";
import { formatTokens } from "../../../lib/format";
import { controlHelp } from "../lib/controls";
import { formatUsage, statusLabel } from "../lib/format";
import { ContinueDialog } from "./continue-dialog";

export interface Controls {
  pauseOrResume: () => void;
  cancelRun: () => void;
  hardCancel: () => void;
  forkHead: () => void;
  // compact opens the form that compacts the session.
  compact: () => void;
  continueWith: (agent: string) => void;
  remove: () => void;
  exportMarkdown: () => void;
  // rename gives the session a new title; it reports whether that worked.
  rename: (title: string) => Promise<boolean>;
  // budget opens the form that sets the tree's budget.
  budget: () => void;
}

interface Props {
  meta?: SessionMeta;
  agents: AgentDescriptor[];
  busy: boolean;
  working: boolean;
  // The compaction the run is writing a summary for, while it does.
  compacting?: { tokens: bigint };
  // Only what reads: the session is another owner's.
  readOnly?: boolean;
  // A narrow screen: the controls fold into one menu, and each says what
  // it does (there is no hover to show a tooltip).
  narrow?: boolean;
  controls: Controls;
}

// ChatHeader is the session's title, status, usage, the tree's spend
// against its budget, and controls. Pause or Resume follows the server's
// status. A server without budgets sends no budget state: then neither
// the spend nor the Budget control shows.
export function ChatHeader({ meta, agents, busy, working, compacting, readOnly, narrow = false, controls }: Props) {
  const status = meta?.status;
  const [renaming, setRenaming] = useState(false);
  const usage = (
    <dl className="usage" aria-label="Token usage">
      {formatUsage(meta?.usage).map((u) => (
        <div key={u.label}>
          <dt>{u.label}</dt>
          <dd>{u.value}</dd>
        </div>
      ))}
    </dl>
  );
  const spend = meta?.budget && <BudgetMeter state={meta.budget} label="Budget" className={meta.budget.exceeded ? "exceeded" : undefined} />;
  const write = !readOnly && narrow && (
    <WriteControls meta={meta} agents={agents} busy={busy} working={working} described controls={controls} onRename={() => setRenaming(true)} />
  );
  return (
    <header className={`chat-header${narrow ? " narrow" : ""}`}>
      <div className="chat-title">
        {renaming && meta ? (
          <RenameForm
            title={meta.title}
            onSave={async (t) => {
              if (await controls.rename(t)) setRenaming(false);
            }}
            onCancel={() => setRenaming(false)}
          />
        ) : (
          <h1 title={narrow ? meta?.title : undefined}>{meta?.title || "Session"}</h1>
        )}
        <div className="chat-sub">
          {meta?.agent && <Link to={`/agents/${meta.agent}`}>{meta.agent}</Link>}
          {meta && agentVersionText(meta) && <span className="agent-version">{agentVersionText(meta)}</span>}
          <span className={`badge badge-${statusLabel(status)}`} role="status" aria-label={`Status: ${statusLabel(status)}`}>
            {statusLabel(status)}
          </span>
          {compacting && (
            <span className="compacting" role="status" aria-label="Compacting">
              compacting{compacting.tokens > 0n ? ` ${formatTokens(compacting.tokens)} tokens` : ""}…
            </span>
          )}
          {status === SessionStatus.FAILED && meta?.statusReason && <span className="error-text">{meta.statusReason}</span>}
          {meta?.parentId && <Link to={`/sessions/${meta.parentId}`}>parent session</Link>}
          {meta?.forkedFrom && <ForkNote source={meta.forkedFrom} />}
        </div>
        {!narrow && (
          <div className="chat-metrics">
            {usage}
            {spend}
          </div>
        )}
      </div>
      {readOnly ? (
        <div className="chat-controls" role="toolbar" aria-label="Session controls">
          <button type="button" onClick={controls.exportMarkdown} disabled={!meta}>
            Export
          </button>
        </div>
      ) : narrow ? (
        <ActionsMenu>
          {usage}
          {spend}
          {write}
        </ActionsMenu>
      ) : (
        <DesktopControls meta={meta} agents={agents} busy={busy} working={working} controls={controls} onRename={() => setRenaming(true)} />
      )}
    </header>
  );
}

// RenameForm edits the session's title in place of the heading: Enter
// (or Save) saves it, Escape (or Cancel) leaves it as it was.
function RenameForm({ title, onSave, onCancel }: { title: string; onSave: (title: string) => void; onCancel: () => void }) {
  const [text, setText] = useState(title);
  return (
    <form
      className="rename"
      aria-label="Rename the session"
      onSubmit={(e) => {
        e.preventDefault();
        onSave(text.trim());
      }}
    >
      <input
        type="text"
        aria-label="Session title"
        value={text}
        maxLength={200}
        autoFocus
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Escape") {
            e.stopPropagation();
            onCancel();
          }
        }}
      />
      <button type="submit" className="primary">
        Save
      </button>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
    </form>
  );
}

// ForkNote says the session is a fork, naming and linking the session it
// was forked from.
function ForkNote({ source }: { source: string }) {
  const q = useQuery(SessionService.method.getSession, { sessionId: source, metaOnly: true }, { staleTime: 60_000, retry: false });
  const meta = q.data?.session?.meta;
  const name = meta ? (meta.title.trim() ? `“${meta.title.trim()}”` : "an untitled session") : q.isError ? "a session that is gone" : "another session";
  return (
    <span className="fork-note">
      Fork of <Link to={`/sessions/${source}`}>{name}</Link>
    </span>
  );
}

// ActionsMenu folds the session's controls behind one button. The
// controls stay in the page while it is closed, so their keys (Alt+P)
// still press them.
function ActionsMenu({ children }: { children: ReactNode }) {
  const [open, setOpen] = useState(false);
  const id = useId();
  const root = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (!open) return;
    const away = (e: PointerEvent) => {
      if (!root.current?.contains(e.target as Node)) setOpen(false);
    };
    const escape = (e: KeyboardEvent) => {
      if (e.key !== "Escape") return;
      setOpen(false);
      button.current?.focus();
    };
    document.addEventListener("pointerdown", away);
    document.addEventListener("keydown", escape);
    return () => {
      document.removeEventListener("pointerdown", away);
      document.removeEventListener("keydown", escape);
    };
  }, [open]);
  return (
    <div className="actions-menu" ref={root}>
      <button ref={button} type="button" aria-expanded={open} aria-controls={id} onClick={() => setOpen((o) => !o)}>
        Actions
      </button>
      <div
        id={id}
        className="actions-panel"
        role="toolbar"
        aria-label="Session controls"
        aria-orientation="vertical"
        hidden={!open}
        onClick={(e) => {
          // A control was pressed: the menu has done its work.
          if ((e.target as Element).closest("button")) setOpen(false);
        }}
      >
        {children}
      </div>
    </div>
  );
}

// DesktopControls keep the controls a run needs in view (pause or resume,
// cancel, fork) and group the rarely used ones in a menu, so the header
// stays a few lines high.
function DesktopControls({
  meta,
  agents,
  busy,
  working,
  controls,
  onRename,
}: Omit<Props, "readOnly" | "narrow" | "compacting"> & { onRename: () => void }) {
  const [continuing, setContinuing] = useState(false);
  const status = meta?.status;
  const items: MenuItem[] = [
    { label: "Hard cancel", title: controlHelp.hardCancel, onSelect: controls.hardCancel, disabled: working || status !== SessionStatus.RUNNING },
    { label: "Compact", title: controlHelp.compact, onSelect: controls.compact, disabled: working || !meta?.turnCount },
    { label: "Continue with…", title: controlHelp.continueWith, onSelect: () => setContinuing(true), disabled: working || !meta },
    { label: "Rename", onSelect: onRename, disabled: working || !meta },
    ...(meta?.budget ? [{ label: "Budget", onSelect: controls.budget, disabled: working }] : []),
    { label: "Export", title: "Download the session as Markdown", onSelect: controls.exportMarkdown, disabled: !meta },
    { label: "Delete", onSelect: controls.remove, disabled: !meta, danger: true },
  ];
  return (
    <div className="chat-controls" role="toolbar" aria-label="Session controls">
      <StopControls meta={meta} busy={busy} working={working} described={false} controls={controls} />
      <Control label="Fork" help={controlHelp.fork} described={false} onClick={controls.forkHead} disabled={working || !meta} />
      <MenuButton label="More" items={items} />
      <ContinueDialog
        open={continuing}
        onClose={() => setContinuing(false)}
        current={meta?.agent}
        agents={agents}
        continueWith={controls.continueWith}
      />
    </div>
  );
}

// StopControls are Pause (or Resume) and Cancel run.
function StopControls({
  meta,
  busy,
  working,
  described,
  controls,
}: Pick<Props, "meta" | "busy" | "working" | "controls"> & { described: boolean }) {
  const status = meta?.status;
  const resumable = status === SessionStatus.PAUSED || status === SessionStatus.FAILED || status === SessionStatus.WAITING;
  // A waiting run goes on once its calls are answered: Resume cannot
  // help before.
  const blocked = status === SessionStatus.WAITING && (meta?.pendingCalls ?? 0) > 0;
  return (
    <>
      {resumable ? (
        <Control
          label="Resume"
          help={blocked ? controlHelp.resumeBlocked : controlHelp.resume}
          keys="Alt+P"
          described={described}
          shortcut="pause"
          onClick={controls.pauseOrResume}
          disabled={working || blocked}
        />
      ) : (
        <Control
          label="Pause"
          help={controlHelp.pause}
          keys="Alt+P"
          described={described}
          shortcut="pause"
          onClick={controls.pauseOrResume}
          disabled={working || status !== SessionStatus.RUNNING}
        />
      )}
      <Control
        label="Cancel run"
        help={controlHelp.cancelRun}
        described={described}
        onClick={controls.cancelRun}
        disabled={working || !(busy || status === SessionStatus.PAUSED)}
      />
    </>
  );
}

// WriteControls are the controls that change the session, all of them, as
// a narrow screen's Actions panel holds them: each stop control says what
// it does beside it.
function WriteControls({
  meta,
  agents,
  busy,
  working,
  described,
  controls,
  onRename,
}: Omit<Props, "readOnly" | "narrow" | "compacting"> & { described: boolean; onRename: () => void }) {
  const [other, setOther] = useState("");
  const status = meta?.status;
  return (
    <>
      <StopControls meta={meta} busy={busy} working={working} described={described} controls={controls} />
      <Control label="Hard cancel" help={controlHelp.hardCancel} described={described} onClick={controls.hardCancel} disabled={working || status !== SessionStatus.RUNNING} />
      <Control label="Fork" help={controlHelp.fork} described={described} onClick={controls.forkHead} disabled={working || !meta} />
      <Control label="Compact" help={controlHelp.compact} described={described} onClick={controls.compact} disabled={working || !meta?.turnCount} />
      <form
        className="continue"
        aria-label="Continue with another agent"
        onSubmit={(e) => {
          e.preventDefault();
          if (other) controls.continueWith(other);
        }}
      >
        <select aria-label="Agent to continue with" value={other} onChange={(e) => setOther(e.target.value)}>
          <option value="">Continue with…</option>
          {agents
            .filter((a) => a.slug !== meta?.agent)
            .map((a) => (
              <option key={a.slug} value={a.slug}>
                {a.slug}
              </option>
            ))}
        </select>
        <button type="submit" disabled={working || !other}>
          Continue
        </button>
      </form>
      <button type="button" onClick={onRename} disabled={working || !meta}>
        Rename
      </button>
      {meta?.budget && (
        <button type="button" onClick={controls.budget} disabled={working}>
          Budget
        </button>
      )}
      <button type="button" onClick={controls.exportMarkdown} disabled={!meta}>
        Export
      </button>
      <button type="button" className="danger" onClick={controls.remove} disabled={!meta}>
        Delete
      </button>
    </>
  );
}

interface ControlProps {
  label: string;
  help: string;
  keys?: string;
  described: boolean;
  shortcut?: string;
  onClick: () => void;
  disabled: boolean;
}

// Control is a button that says what it does: as its tooltip, and, when
// described, in a line beside it that is also its accessible description.
function Control({ label, help, keys, described, shortcut, onClick, disabled }: ControlProps) {
  const id = useId();
  const tip = keys ? `${help} (${keys})` : help;
  const button = (
    <button type="button" data-shortcut={shortcut} onClick={onClick} disabled={disabled} title={tip} aria-describedby={described ? id : undefined}>
      {label}
    </button>
  );
  if (!described) return button;
  return (
    <div className="control">
      {button}
      <span id={id} className="control-help">
        {help}
      </span>
    </div>
  );
}

// agentVersionText names the version of its stored agent a session runs:
// the one it is pinned to, else the one of its current or latest run;
// nothing for a file agent.
function agentVersionText(meta: SessionMeta): string {
  if (meta.pinnedAgentVersion > 0n) return `v${meta.pinnedAgentVersion} (pinned)`;
  if (meta.agentVersion > 0n) return `v${meta.agentVersion}`;
  return "";
}
