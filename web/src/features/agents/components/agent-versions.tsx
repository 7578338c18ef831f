import { timestampDate } from "@bufbuild/protobuf/wkt";
import { useQuery } from "@connectrpc/connect-query";
import { useId, useState } from "react";
import { Link, useParams, useSearchParams } from "react-router";
import { AgentService, type AgentVersion } from "../../../gen/agents/v1/agent_pb";
import { errorText } from "../../../lib/error-text";
import { agentPath } from "../../../lib/paths";
import { pretty } from "../lib/definition";
import { JsonEditor } from "./json-editor";
import { VersionDiffView } from "./version-diff-view";

// AgentVersionsPage lists a stored agent's versions, newest first; one
// opens read-only, and editing can start from its text; two compare as a
// diff. A file agent has none (its history is its file's).
export function AgentVersionsPage() {
  const { slug = "" } = useParams();
  const q = useQuery(AgentService.method.listAgentVersions, { slug });
  const heading = useId();
  const [open, setOpen] = useState<bigint>();
  const versions = q.data?.versions ?? [];
  const shown = versions.find((v) => v.version === open);
  return (
    <section className="page-content agent-versions" aria-labelledby={heading}>
      <header className="page-header">
        <h1 id={heading}>Versions of {slug}</h1>
        <Link to={agentPath(slug)} className="button">
          Back to {slug}
        </Link>
      </header>
      {q.isPending ? (
        <p>Loading…</p>
      ) : q.error ? (
        <p role="alert" className="error">
          Could not list the versions: {errorText(q.error)}
        </p>
      ) : versions.length === 0 ? (
        <p>{slug} has no stored versions: it comes from an agent file.</p>
      ) : (
        <ol className="version-list" aria-label="Versions">
          {versions.map((v) => (
            <li key={String(v.version)} className={v.version === open ? "open" : undefined}>
              <VersionRow v={v} open={v.version === open} onOpen={() => setOpen(v.version === open ? undefined : v.version)} />
            </li>
          ))}
        </ol>
      )}
      {shown && (
        <section className="version-view" aria-label={`Version ${shown.version}`}>
          <h2>Version {String(shown.version)}</h2>
          <JsonEditor label={`Definition of version ${shown.version}`} value={pretty(shown.definition)} readOnly />
          <div className="actions">
            <Link to={agentPath(slug, "edit")} state={{ definition: pretty(shown.definition), version: String(shown.version) }} className="button">
              Edit from this version
            </Link>
          </div>
        </section>
      )}
      {versions.length >= 2 && <Compare slug={slug} versions={versions} />}
    </section>
  );
}

function VersionRow({ v, open, onOpen }: { v: AgentVersion; open: boolean; onOpen: () => void }) {
  const when = v.createTime && timestampDate(v.createTime);
  return (
    <div className="version-row">
      <strong>Version {String(v.version)}</strong>
      {v.current && <span className="kind">current</span>}
      {when && (
        <time dateTime={when.toISOString()} className="muted">
          {when.toLocaleString()}
        </time>
      )}
      {v.author && <span className="muted">by {v.author}</span>}
      <button type="button" className="button" aria-expanded={open} onClick={onOpen}>
        {open ? `Hide version ${v.version}` : `View version ${v.version}`}
      </button>
    </div>
  );
}

// Compare shows the diff between two versions picked, by default the one
// before the newest and the newest. The pick is in the address
// (?from=1&to=3), so a diff can be linked.
function Compare({ slug, versions }: { slug: string; versions: AgentVersion[] }) {
  const [params, setParams] = useSearchParams();
  const heading = useId();
  const fromId = useId();
  const toId = useId();
  const pick = (name: string, fallback: AgentVersion) => versions.find((v) => String(v.version) === params.get(name)) ?? fallback;
  const from = pick("from", versions[1]);
  const to = pick("to", versions[0]);
  const choose = (name: "from" | "to", value: string) =>
    setParams(
      (p) => {
        const next = new URLSearchParams(p);
        next.set(name, value);
        if (!next.has(name === "from" ? "to" : "from")) next.set(name === "from" ? "to" : "from", String((name === "from" ? to : from).version));
        return next;
      },
      { replace: true },
    );
  const select = (id: string, label: string, name: "from" | "to", value: AgentVersion) => (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={String(value.version)} onChange={(e) => choose(name, e.target.value)}>
        {versions.map((v) => (
          <option key={String(v.version)} value={String(v.version)}>
            Version {String(v.version)}
            {v.current ? " (current)" : ""}
          </option>
        ))}
      </select>
    </div>
  );
  return (
    <section className="version-compare" aria-labelledby={heading}>
      <h2 id={heading}>Compare versions of {slug}</h2>
      <p className="muted">
        Each definition is read as JSON and written one way (keys sorted, two-space indent), so only what changed in meaning shows.
      </p>
      <div className="form-row">
        {select(fromId, "From", "from", from)}
        {select(toId, "To", "to", to)}
      </div>
      <VersionDiffView older={from} newer={to} />
    </section>
  );
}
