import { useId, useRef, useState, type ClipboardEvent, type DragEvent, type FormEvent, type KeyboardEvent } from "react";
import type { Attachment } from "../../../gen/agents/v1/session_pb";
import { readAttachment } from "../lib/attachments";
import { controlHelp } from "../lib/controls";
import { AttachmentChips } from "./attachment-chips";

export interface ComposerMessage {
  text: string;
  attachments: Attachment[];
}

interface Props {
  // Whether Send posts (the session accepts input) or adds to the draft.
  accepts: boolean;
  // Whether a run is busy, so Interrupt has something to cut short.
  canInterrupt: boolean;
  disabled: boolean;
  onSend: (m: ComposerMessage) => Promise<boolean> | boolean;
  onInterrupt: (m: ComposerMessage) => Promise<boolean> | boolean;
  // The text held when the chat was left, to start with.
  initialText?: string;
  onTextChange?: (text: string) => void;
  inputRef?: React.RefObject<HTMLTextAreaElement | null>;
}

// Composer is where the user writes: Enter sends, Shift+Enter starts a
// new line, Escape leaves the box. Files come by drag and drop, by
// pasting images, or from the picker, and show as removable chips.
export function Composer({ accepts, canInterrupt, disabled, onSend, onInterrupt, initialText = "", onTextChange, inputRef }: Props) {
  const [text, setTextState] = useState(initialText);
  const [atts, setAtts] = useState<Attachment[]>([]);
  const [dragging, setDragging] = useState(false);
  const [readError, setReadError] = useState<string>();
  const picker = useRef<HTMLInputElement>(null);
  const hintId = useId();
  const empty = text.trim() === "" && atts.length === 0;

  const setText = (t: string) => {
    setTextState(t);
    onTextChange?.(t);
  };

  const add = async (files: File[]) => {
    try {
      const read = await Promise.all(files.map((f) => readAttachment(f)));
      setAtts((a) => [...a, ...read]);
      setReadError(undefined);
    } catch (err) {
      setReadError(`Could not read the file: ${err instanceof Error ? err.message : String(err)}`);
    }
  };

  const submit = async (interrupt: boolean) => {
    if (disabled || (empty && !interrupt)) return;
    const m = { text: text.trim(), attachments: atts };
    const ok = await (interrupt ? onInterrupt(m) : onSend(m));
    if (ok) {
      setText("");
      setAtts([]);
    }
  };

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      void submit(false);
    } else if (e.key === "Escape") {
      e.currentTarget.blur();
    }
  };

  const onPaste = (e: ClipboardEvent<HTMLTextAreaElement>) => {
    const files = Array.from(e.clipboardData.files).filter((f) => f.type.startsWith("image/"));
    if (files.length > 0) {
      e.preventDefault();
      void add(files);
    }
  };

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    const files = Array.from(e.dataTransfer.files);
    if (files.length > 0) void add(files);
  };

  return (
    <form
      className={`composer${dragging ? " composer-drop" : ""}`}
      aria-label="Composer"
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        void submit(false);
      }}
      onDragOver={(e) => {
        if (e.dataTransfer.types.includes("Files")) {
          e.preventDefault();
          setDragging(true);
        }
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={onDrop}
    >
      <AttachmentChips attachments={atts} onRemove={(i) => setAtts((a) => a.filter((_, j) => j !== i))} />
      {readError && (
        <p role="alert" className="error-text">
          {readError}
        </p>
      )}
      <textarea
        ref={inputRef}
        aria-label="Message"
        aria-describedby={hintId}
        className="composer-input"
        rows={3}
        value={text}
        placeholder={accepts ? "Write a message" : "The run is busy: what you send is added to the draft"}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={onKeyDown}
        onPaste={onPaste}
      />
      <div className="composer-bar">
        <span id={hintId} className="muted hint">
          Enter sends, Shift+Enter starts a new line{accepts ? "" : "; while the run is busy Send adds to the draft"}
        </span>
        <input
          ref={picker}
          type="file"
          multiple
          hidden
          aria-label="Attach files"
          onChange={(e) => {
            const files = Array.from(e.target.files ?? []);
            e.target.value = "";
            void add(files);
          }}
        />
        <button type="button" onClick={() => picker.current?.click()}>
          Attach
        </button>
        <button type="button" data-shortcut="interrupt" onClick={() => void submit(true)} disabled={disabled || !canInterrupt} title={`${controlHelp.interrupt} (Alt+I)`}>
          Interrupt
        </button>
        <button type="submit" className="primary" disabled={disabled || empty}>
          Send
        </button>
      </div>
    </form>
  );
}
