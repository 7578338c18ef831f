import { timestampDate } from "@bufbuild/protobuf/wkt";
import { useQuery } from "@connectrpc/connect-query";
import { useId, useState } from "react";
import { Link, useParams } from "react-router";
import { AgentService, type AgentVersion } from "../../../gen/agents/v1/agent_pb";
import { errorText } from "../../../lib/error-text";
import { agentPath } from "../../../lib/paths";
import { pretty } from "../lib/definition";
import { JsonEditor } from "./json-editor";

// AgentVersionsPage lists a stored agent's versions, newest first; one
// opens read-only, and editing can start from its text. A file agent has
// none (its history is its file's).
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
