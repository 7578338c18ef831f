import { skipToken, useMutation, useQuery, useTransport } from "@connectrpc/connect-query";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { Link, NavLink, Route, Routes, useNavigate } from "react-router";
import { AgentService } from "../../../gen/agents/v1/agent_pb";
import { SessionStatus } from "../../../gen/agents/v1/session_pb";
import { SessionService } from "../../../gen/agents/v1/session_service_pb";
import { errorText } from "../../../lib/error-text";
import { narrowScreen, useMediaQuery } from "../../../lib/media-query";
import { useShortcut } from "../../../lib/shortcuts";
import { createSessionClient } from "../../../lib/transport";
import { exportMarkdown } from "../api/export-session";
import { useDraftsConnected } from "../hooks/use-draft";
import { useSession } from "../hooks/use-session";
import { heldText, holdText } from "../lib/composer-memory";
import { drafts } from "../lib/draft-store";
import { acceptsInput, awaitsRun, isBusy } from "../lib/session-state";
import { budgetStop, nextCallNeeds } from "../lib/tree-budget";
import { BudgetStopNote } from "./budget-stop-note";
import { ChatHeader, type Controls } from "./chat-header";
import { CompactDialog } from "./compact-dialog";
import { Composer, type ComposerMessage } from "./composer";
import { DeleteDialog } from "./delete-dialog";
import { DraftPanel } from "./draft-panel";
import { MailTab } from "./mail-tab";
import { TimelineTab } from "./timeline-tab";
import { given, ParamsForm } from "./params-form";
import { PendingCalls } from "./pending-calls";
import { SessionBudgetDialog } from "./session-budget-dialog";
import { Transcript } from "./transcript";

// ChatSession is one open session: header and controls, the conversation
// or the mailbox, the pending calls, the draft and the composer.
export function ChatSession({ id }: { id: string }) {
  useDraftsConnected();
  const { state, readOnly, error, missing, olderLoading, loadOlder, reload } = useSession(id);
  const narrow = useMediaQuery(narrowScreen);
  const transport = useTransport();
  const client = useMemo(() => createSessionClient(transport), [transport]);
  const navigate = useNavigate();
  const meta = state.meta;
  const status = meta?.status;
  const accepts = acceptsInput(status);
  const busy = isBusy(status);

  const agent = useQuery(AgentService.method.getAgent, meta?.agent ? { slug: meta.agent } : skipToken, { staleTime: 60_000 });
  const agents = useQuery(AgentService.method.listAgents, {}, { staleTime: 60_000 });
  const declared = agent.data?.agent?.params ?? [];
  // Params live in this component's memory only: never in the browser's
  // storage.
  const [params, setParams] = useState<Record<string, string>>({});

  const [notice, setNotice] = useState<string>();
  const [working, setWorking] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [budgeting, setBudgeting] = useState(false);
  const [compacting, setCompacting] = useState(false);
  const stop = budgetStop(meta, state.stoppedBy, nextCallNeeds(state.turns));

  const post = useMutation(SessionService.method.postMessage);
  const pause = useMutation(SessionService.method.pause);
  const resume = useMutation(SessionService.method.resume);
  const cancel = useMutation(SessionService.method.cancelRun);
  const cancelAttached = useMutation(SessionService.method.cancelAttached);
  const fork = useMutation(SessionService.method.forkSession);
  const rename = useMutation(SessionService.method.renameSession);
  const update = useMutation(SessionService.method.updateSession);
  const compact = useMutation(SessionService.method.compact);

  // The run may have stopped while nobody watched: a draft waiting for it
  // goes now.
  useEffect(() => {
    if (state.loaded) void drafts.settle(id, status);
  }, [state.loaded, status, id]);

  const act = useCallback(async (what: string, fn: () => Promise<unknown>): Promise<boolean> => {
    setWorking(true);
    try {
      await fn();
      setNotice(undefined);
      return true;
    } catch (err) {
      setNotice(`${what}: ${errorText(err)}`);
      return false;
    } finally {
      setWorking(false);
    }
  }, []);

  const postMessage = (m: ComposerMessage, interrupt: boolean) =>
    act(interrupt ? "Interrupt" : "Send", () =>
      post.mutateAsync({ sessionId: id, message: { text: m.text, attachments: m.attachments, interrupt }, params: given(params) }),
    );

  const onSend = async (m: ComposerMessage) => {
    if (!meta) return false;
    if (accepts) return postMessage(m, false);
    drafts.append(id, m.text, m.attachments);
    return true;
  };

  // Interrupt continues with the composer's message, bypassing the draft;
  // with nothing written it stops the run.
  const onInterrupt = async (m: ComposerMessage) => {
    if (m.text === "" && m.attachments.length === 0) return act("Cancel run", () => cancel.mutateAsync({ sessionId: id }));
    return postMessage(m, true);
  };

  const forkAt = (atTurn?: number) =>
    act("Fork", async () => {
      const res = await fork.mutateAsync({ sessionId: id, atTurn });
      const to = res.session?.meta?.id;
      if (to) navigate(`/sessions/${to}`);
    });

  const resumeRun = () => act("Resume", () => resume.mutateAsync({ sessionId: id, params: given(params) }));
  const controls: Controls = {
    pauseOrResume: () => void (status === SessionStatus.RUNNING ? act("Pause", () => pause.mutateAsync({ sessionId: id })) : resumeRun()),
    cancelRun: () => void act("Cancel run", () => cancel.mutateAsync({ sessionId: id })),
    hardCancel: () => void act("Hard cancel", () => cancelAttached.mutateAsync({ sessionId: id })),
    forkHead: () => void forkAt(undefined),
    compact: () => setCompacting(true),
    continueWith: (slug) =>
      void act("Continue", async () => {
        const res = await fork.mutateAsync({ sessionId: id, agent: slug });
        const to = res.session?.meta?.id;
        if (to) navigate(`/sessions/${to}`);
      }),
    remove: () => setDeleting(true),
    exportMarkdown: () => void act("Export", () => exportMarkdown(client, id, meta?.title ?? "")),
    // The new title comes back with the session's next update.
    rename: (title) => act("Rename", () => rename.mutateAsync({ sessionId: id, title })),
    budget: () => setBudgeting(true),
  };

  // The budget is the tree's, kept on its root; the new state comes back
  // with the sessions' next updates. The dialog shows a failure itself.
  const saveBudget = async (budget: Parameters<typeof update.mutateAsync>[0]["budget"], then: boolean) => {
    await update.mutateAsync({ sessionId: meta?.rootId || id, budget });
    if (then) await resumeRun();
  };

  // at_turn counts from the newest turn, 0 being the head.
  const turnCount = meta?.turnCount ?? 0;
  const onFork = useCallback((index: number) => void forkAt(turnCount - 1 - index), [turnCount]); // eslint-disable-line react-hooks/exhaustive-deps

  // Alt+I interrupts, Alt+P pauses or resumes, from the composer too:
  // they press the buttons, so they do what the buttons do and nothing
  // while those are disabled.
  const root = useRef<HTMLDivElement>(null);
  const press = (which: string) => () => {
    const b = root.current?.querySelector<HTMLButtonElement>(`[data-shortcut="${which}"]`);
    if (b && !b.disabled) b.click();
  };
  useShortcut({ keys: "alt+i", description: "Interrupt the run (with the composer's message, if any)", group: "Chat", inFields: true, run: press("interrupt") });
  useShortcut({ keys: "alt+p", description: "Pause or resume the session", group: "Chat", inFields: true, run: press("pause") });

  const missingRequired = declared.some((p) => p.required && !params[p.name]);
  const paramsOpen = missingRequired && (turnCount === 0 || state.failureCode === "params_required");

  if (missing && !state.loaded) return <SessionMissing id={id} />;

  return (
    <div className="chat" ref={root}>
      <ChatHeader
        meta={meta}
        agents={agents.data?.agents ?? []}
        busy={busy}
        working={working}
        compacting={state.compacting}
        readOnly={readOnly}
        narrow={narrow}
        controls={controls}
      />
      <nav className="chat-tabs" aria-label="Session views">
        <NavLink to={`/sessions/${id}`} end>
          Conversation
        </NavLink>
        <NavLink to={`/sessions/${id}/mail`}>Mail{meta?.pendingMail ? ` (${meta.pendingMail})` : ""}</NavLink>
        <NavLink to={`/sessions/${id}/timeline`}>Timeline</NavLink>
      </nav>
      {error && !state.loaded && (
        <p role="alert" className="error-text banner">
          Could not load the session: {error}{" "}
          <button type="button" onClick={reload}>
            Retry
          </button>
        </p>
      )}
      {readOnly && (
        <p role="note" aria-label="Read only" className="banner">
          Read only: this session is {meta?.owner ? `${meta.owner}'s` : "another owner's"}. Your admin token lets you read and follow it; only
          its owner can post to it, answer its calls or change it.
        </p>
      )}
      {state.deleted && (
        <p role="alert" className="banner">
          This session was deleted.
        </p>
      )}
      <BudgetStopNote stop={stop} readOnly={readOnly} working={working} onRaise={() => setBudgeting(true)} onResume={() => void resumeRun()} />
      {!readOnly && awaitsRun(state) && (
        <div role="region" aria-label="Not answered yet" className="banner awaits-run">
          <p>
            {meta?.forkedFrom ? "This fork ends with a question" : "This session ends with a question"} that has no answer yet. Run it with{" "}
            <strong>{meta?.agent}</strong>, or write a message below.
          </p>
          <button type="button" className="primary" onClick={() => void act("Run", () => resume.mutateAsync({ sessionId: id, params: given(params) }))} disabled={working}>
            Run
          </button>
        </div>
      )}
      {notice && (
        <p role="alert" className="error-text banner">
          {notice}
        </p>
      )}
      <Routes>
        <Route
          index
          element={
            <div className="conversation">
              <Transcript state={state} olderLoading={olderLoading} onLoadOlder={loadOlder} onFork={readOnly ? undefined : onFork} />
              {readOnly ? (
                <div className="chat-bottom">
                  <PendingCalls calls={state.pending} params={{}} readOnly />
                </div>
              ) : (
                <div className="chat-bottom">
                  <PendingCalls calls={state.pending} params={given(params)} />
                  <DraftPanel sessionId={id} paused={status === SessionStatus.PAUSED} />
                  <ParamsForm params={declared} values={params} onChange={setParams} open={paramsOpen} />
                  <Composer
                    key={id}
                    accepts={accepts}
                    canInterrupt={busy}
                    disabled={!meta || state.deleted}
                    onSend={onSend}
                    onInterrupt={onInterrupt}
                    initialText={heldText(id)}
                    onTextChange={(t) => holdText(id, t)}
                  />
                </div>
              )}
            </div>
          }
        />
        <Route path="mail" element={<MailTab sessionId={id} readOnly={readOnly} />} />
        <Route path="timeline" element={<TimelineTab key={id} sessionId={id} />} />
      </Routes>
      {meta && !readOnly && <SessionBudgetDialog open={budgeting} meta={meta} stop={stop} onClose={() => setBudgeting(false)} save={saveBudget} />}
      {!readOnly && (
        <CompactDialog
          open={compacting}
          onClose={() => setCompacting(false)}
          compact={(instruction) => compact.mutateAsync({ sessionId: id, instruction })}
        />
      )}
      {deleting && meta && (
        <DeleteDialog
          meta={meta}
          onClose={() => setDeleting(false)}
          onDeleted={() => {
            drafts.clear(id);
            holdText(id, "");
            navigate("/");
          }}
        />
      )}
    </div>
  );
}

// SessionMissing is the page of a session the server does not have: it
// was deleted, the link is wrong, or it is another owner's.
function SessionMissing({ id }: { id: string }) {
  return (
    <section className="page-content" aria-labelledby="session-missing">
      <h1 id="session-missing">No such session</h1>
      <p>
        There is no session <code>{id}</code>: it was deleted, or the link is wrong.
      </p>
      <p>
        <Link to="/">Back to the start page</Link>, to start a session or open another.
      </p>
    </section>
  );
}
