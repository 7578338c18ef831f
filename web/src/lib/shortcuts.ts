import { useEffect, useRef, useSyncExternalStore } from "react";

// A keyboard shortcut. keys is a sequence of chords separated by spaces:
// "n", "?", "g s", "Escape", "mod+Enter" (mod is Ctrl or ⌘), "shift+Enter",
// "alt+ArrowUp". A printable key is written as typed ("?" not "shift+/").
export interface Shortcut {
  keys: string;
  description: string;
  // Heading in the help dialog ("General", "Sessions", "Chat", …).
  group?: string;
  run: (e: KeyboardEvent) => void;
  // Also while typing in a field (for chords with a modifier or Escape).
  inFields?: boolean;
  // Only while this says so (a screen that is open, a dialog that is shut).
  when?: () => boolean;
}

// How long the second key of a sequence ("g s") may wait.
const sequenceMs = 1_000;

// ShortcutRegistry holds every shortcut features register and runs them
// from the keyboard. The help dialog lists them.
export class ShortcutRegistry {
  private items: Shortcut[] = [];
  private snapshot: readonly Shortcut[] = [];
  private listeners = new Set<() => void>();
  private pending: string[] = [];
  private pendingAt = 0;

  // register adds a shortcut and returns what removes it. The newest
  // registration of the same keys wins while both are active.
  register(s: Shortcut): () => void {
    this.items = [...this.items, s];
    this.changed();
    return () => {
      this.items = this.items.filter((x) => x !== s);
      this.changed();
    };
  }

  // list is every registered shortcut, for the help dialog; duplicates of
  // the same keys and description are listed once.
  list = (): readonly Shortcut[] => this.snapshot;

  subscribe = (l: () => void): (() => void) => {
    this.listeners.add(l);
    return () => {
      this.listeners.delete(l);
    };
  };

  // handle runs the shortcut a key press completes; it reports whether
  // one ran.
  handle = (e: KeyboardEvent): boolean => {
    if (e.defaultPrevented || e.isComposing) return false;
    const chord = chordOf(e);
    if (!chord) return false;
    const typing = isField(e.target);
    const now = Date.now();
    if (now - this.pendingAt > sequenceMs) this.pending = [];
    const seq = [...this.pending, chord];
    const active = this.items.filter((s) => (!typing || s.inFields) && (!s.when || s.when()));
    for (const tries of [seq, [chord]]) {
      const want = tries.join(" ");
      const hit = [...active].reverse().find((s) => normalize(s.keys) === want);
      if (hit) {
        this.pending = [];
        e.preventDefault();
        hit.run(e);
        return true;
      }
      const prefix = active.some((s) => normalize(s.keys).startsWith(want + " "));
      if (prefix) {
        this.pending = tries;
        this.pendingAt = now;
        return false;
      }
    }
    this.pending = [];
    return false;
  };

  // install listens to key presses on a target (the window) and returns
  // what stops it.
  install(target: Pick<Window, "addEventListener" | "removeEventListener"> = window): () => void {
    const onKey = (e: Event) => void this.handle(e as KeyboardEvent);
    target.addEventListener("keydown", onKey);
    return () => target.removeEventListener("keydown", onKey);
  }

  private changed() {
    const seen = new Set<string>();
    this.snapshot = this.items.filter((s) => {
      const k = `${normalize(s.keys)}\n${s.description}`;
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    });
    for (const l of this.listeners) l();
  }
}

// The app's registry.
export const shortcuts = new ShortcutRegistry();

// useShortcut registers a shortcut while a component is mounted; run may
// change between renders without registering again.
export function useShortcut(s: Shortcut, registry: ShortcutRegistry = shortcuts): void {
  const latest = useRef(s);
  latest.current = s;
  const { keys, description, group, inFields } = s;
  useEffect(
    () =>
      registry.register({
        keys,
        description,
        group,
        inFields,
        run: (e) => latest.current.run(e),
        when: () => latest.current.when?.() ?? true,
      }),
    [registry, keys, description, group, inFields],
  );
}

// useShortcutList is every registered shortcut, kept current.
export function useShortcutList(registry: ShortcutRegistry = shortcuts): readonly Shortcut[] {
  return useSyncExternalStore(registry.subscribe, registry.list);
}

// keyLabels renders keys for people: "g s" → ["g", "s"], "mod+Enter" →
// ["Ctrl", "Enter"] (⌘ on a Mac).
export function keyLabels(keys: string): string[][] {
  const mac = typeof navigator !== "undefined" && /Mac|iPhone|iPad/.test(navigator.platform);
  return keys
    .trim()
    .split(/\s+/)
    .map((chord) =>
      chord.split("+").map((k) => {
        switch (k.toLowerCase()) {
          case "mod":
            return mac ? "⌘" : "Ctrl";
          case "ctrl":
            return "Ctrl";
          case "alt":
            return mac ? "⌥" : "Alt";
          case "shift":
            return "Shift";
          case "meta":
            return "⌘";
          case "escape":
            return "Esc";
          default:
            return k;
        }
      }),
    );
}

const modifierKeys = new Set(["Shift", "Control", "Alt", "Meta", "AltGraph", "CapsLock"]);

// chordOf writes a key press the way shortcuts are written, with mod for
// whichever of Ctrl and ⌘ was held.
function chordOf(e: KeyboardEvent): string | undefined {
  if (modifierKeys.has(e.key)) return undefined;
  const parts: string[] = [];
  if (e.ctrlKey || e.metaKey) parts.push("mod");
  if (e.altKey) parts.push("alt");
  const key = e.key;
  if (e.shiftKey && key.length > 1) parts.push("shift");
  parts.push(key.length === 1 && (e.ctrlKey || e.metaKey || e.altKey) ? key.toLowerCase() : key);
  return parts.join("+");
}

function normalize(keys: string): string {
  return keys
    .trim()
    .split(/\s+/)
    .map((chord) => {
      const parts = chord.split("+");
      const key = parts.pop() ?? "";
      const mods = new Set(parts.map((p) => (p.toLowerCase() === "ctrl" || p.toLowerCase() === "meta" ? "mod" : p.toLowerCase())));
      const out = ["mod", "alt", "shift"].filter((m) => mods.has(m));
      out.push(key.length === 1 && out.some((m) => m !== "shift") ? key.toLowerCase() : key);
      return out.join("+");
    })
    .join(" ");
}

function isField(t: EventTarget | null): boolean {
  if (!(t instanceof HTMLElement)) return false;
  if (t.isContentEditable) return true;
  const tag = t.tagName;
  if (tag === "TEXTAREA" || tag === "SELECT") return true;
  if (tag === "INPUT") {
    const type = (t as HTMLInputElement).type;
    return !["checkbox", "radio", "button", "submit", "reset"].includes(type);
  }
  return false;
}
