import { forwardRef, useImperativeHandle, useMemo, useRef, type UIEvent } from "react";
import type { Place } from "../lib/definition";

export interface JsonEditorHandle {
  // reveal selects a place in the text and brings it into view.
  reveal: (p: Place) => void;
}

interface Props {
  value: string;
  onChange?: (v: string) => void;
  readOnly?: boolean;
  label: string;
  // The place to mark (an error's field) and the id of what says why.
  mark?: Place;
  describedBy?: string;
}

// JsonEditor is a text area for JSON with line numbers, in which a place
// can be marked (the field an error names). A textarea, not a code
// editor library: the app's content policy allows no inline style, which
// such editors write. The mark is drawn by a copy of the text behind the
// transparent text area, scrolled with it.
export const JsonEditor = forwardRef<JsonEditorHandle, Props>(function JsonEditor({ value, onChange, readOnly, label, mark, describedBy }, ref) {
  const area = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLDivElement>(null);
  const backdrop = useRef<HTMLPreElement>(null);
  const lines = useMemo(() => value.split("\n").length, [value]);

  useImperativeHandle(ref, () => ({
    reveal: (p) => {
      const a = area.current;
      if (!a) return;
      a.focus();
      a.setSelectionRange(p.from, p.to);
      const lh = parseFloat(getComputedStyle(a).lineHeight) || 20;
      a.scrollTop = Math.max(0, (p.line - 3) * lh);
      follow(a);
    },
  }));

  // The line numbers and the mark follow the text's scroll.
  const follow = (a: HTMLTextAreaElement) => {
    if (gutter.current) gutter.current.scrollTop = a.scrollTop;
    if (backdrop.current) {
      backdrop.current.scrollTop = a.scrollTop;
      backdrop.current.scrollLeft = a.scrollLeft;
    }
  };

  const m = mark && mark.to >= mark.from ? mark : undefined;
  return (
    <div className={`json-editor${readOnly ? " read-only" : ""}`}>
      <div className="json-gutter" ref={gutter} aria-hidden="true">
        {Array.from({ length: lines }, (_, i) => (
          <span key={i} className={m?.line === i + 1 ? "marked" : undefined}>
            {i + 1}
          </span>
        ))}
      </div>
      <div className="json-text">
        <pre className="json-backdrop" ref={backdrop} aria-hidden="true">
          {m ? (
            <>
              {value.slice(0, m.from)}
              <mark>{value.slice(m.from, m.to) || " "}</mark>
              {value.slice(m.to)}
            </>
          ) : (
            value
          )}
          {"\n"}
        </pre>
        <textarea
          ref={area}
          aria-label={label}
          aria-invalid={m ? true : undefined}
          aria-describedby={describedBy}
          value={value}
          readOnly={readOnly}
          spellCheck={false}
          autoCapitalize="off"
          autoComplete="off"
          autoCorrect="off"
          wrap="off"
          onChange={(e) => onChange?.(e.target.value)}
          onScroll={(e: UIEvent<HTMLTextAreaElement>) => follow(e.currentTarget)}
        />
      </div>
    </div>
  );
});
