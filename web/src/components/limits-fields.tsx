import { useId } from "react";
import type { FieldError, LimitFields } from "../lib/budget";

interface Props {
  legend: string;
  values: LimitFields;
  onChange: (v: LimitFields) => void;
  error?: FieldError;
  // A line under the legend: what the limits cover.
  hint?: string;
}

// LimitsFields are a budget's two limits, each empty for no limit: most
// tokens (input and output) and most US dollars. A wrong value is marked
// at its field.
export function LimitsFields({ legend, values, onChange, error, hint }: Props) {
  const id = useId();
  const field = (name: keyof LimitFields, label: string, placeholder: string, mode: "numeric" | "decimal") => {
    const bad = error?.field === name;
    return (
      <div className="field">
        <label htmlFor={`${id}-${name}`}>{label}</label>
        <input
          id={`${id}-${name}`}
          type="text"
          inputMode={mode}
          autoComplete="off"
          placeholder={placeholder}
          value={values[name]}
          aria-invalid={bad || undefined}
          aria-describedby={bad ? `${id}-${name}-error` : undefined}
          onChange={(e) => onChange({ ...values, [name]: e.target.value })}
        />
        {bad && (
          <p id={`${id}-${name}-error`} className="error">
            {error.message}
          </p>
        )}
      </div>
    );
  };
  return (
    <fieldset className="limits">
      <legend>{legend}</legend>
      {hint && <p className="muted limits-hint">{hint}</p>}
      <div className="limits-row">
        {field("tokens", "Most tokens", "no limit", "numeric")}
        {field("costUsd", "Most US dollars", "no limit", "decimal")}
      </div>
    </fieldset>
  );
}
