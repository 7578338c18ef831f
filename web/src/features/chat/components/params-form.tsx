import type { ParamDescriptor } from "../../../gen/agents/v1/agent_pb";

interface Props {
  params: ParamDescriptor[];
  values: Record<string, string>;
  onChange: (values: Record<string, string>) => void;
  open: boolean;
}

// ParamsForm takes the session params the agent declares. Values stay in
// the page's memory, sent with the next message or resume; secret ones
// are typed in password fields and never stored by the browser.
export function ParamsForm({ params, values, onChange, open }: Props) {
  if (params.length === 0) return null;
  const missing = params.filter((p) => p.required && !values[p.name]).length;
  return (
    <details className="params" open={open || undefined}>
      <summary>
        Session params{missing > 0 ? ` (${missing} required not given)` : ""}
      </summary>
      <p className="muted">Sent with the next message or resume; kept in this page's memory only.</p>
      <div className="params-grid">
        {params.map((p) => {
          const id = `param-${p.name}`;
          return (
            <div key={p.name} className="param">
              <label htmlFor={id}>
                {p.name}
                {p.required ? " (required)" : ""}
                {p.secret ? " (secret)" : ""}
              </label>
              <input
                id={id}
                type={p.secret ? "password" : "text"}
                autoComplete={p.secret ? "new-password" : "off"}
                required={p.required}
                value={values[p.name] ?? ""}
                onChange={(e) => onChange({ ...values, [p.name]: e.target.value })}
                aria-describedby={p.description ? `${id}-desc` : undefined}
              />
              {p.description && (
                <span id={`${id}-desc`} className="muted">
                  {p.description}
                </span>
              )}
            </div>
          );
        })}
      </div>
    </details>
  );
}

// given is the values the user filled in.
export function given(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== ""));
}
