import { afterEach, describe, expect, it, vi } from "vitest";
import { keyLabels, ShortcutRegistry } from "./shortcuts";

function press(r: ShortcutRegistry, key: string, init: KeyboardEventInit = {}, target: EventTarget = document.body) {
  const e = new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true, ...init });
  Object.defineProperty(e, "target", { value: target });
  return r.handle(e);
}

describe("ShortcutRegistry", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("runs single keys, sequences and chords", () => {
    const r = new ShortcutRegistry();
    const n = vi.fn();
    const gs = vi.fn();
    const help = vi.fn();
    const send = vi.fn();
    r.register({ keys: "n", description: "new", run: n });
    r.register({ keys: "g s", description: "sidebar", run: gs });
    r.register({ keys: "?", description: "help", run: help });
    r.register({ keys: "mod+Enter", description: "send", run: send, inFields: true });
    expect(press(r, "n")).toBe(true);
    expect(press(r, "g")).toBe(false);
    expect(press(r, "s")).toBe(true);
    expect(press(r, "?", { shiftKey: true })).toBe(true);
    expect(press(r, "Enter", { ctrlKey: true })).toBe(true);
    expect(press(r, "Enter", { metaKey: true })).toBe(true);
    expect(press(r, "Enter")).toBe(false);
    expect([n, gs, help].map((f) => f.mock.calls.length)).toEqual([1, 1, 1]);
    expect(send).toHaveBeenCalledTimes(2);
  });

  it("forgets the first key of a sequence after a second", () => {
    vi.useFakeTimers();
    const r = new ShortcutRegistry();
    const gs = vi.fn();
    r.register({ keys: "g s", description: "sidebar", run: gs });
    press(r, "g");
    vi.advanceTimersByTime(1_500);
    press(r, "s");
    expect(gs).not.toHaveBeenCalled();
  });

  it("leaves typing alone unless a shortcut asks for fields", () => {
    const r = new ShortcutRegistry();
    const n = vi.fn();
    const esc = vi.fn();
    r.register({ keys: "n", description: "new", run: n });
    r.register({ keys: "Escape", description: "close", run: esc, inFields: true });
    const input = document.createElement("input");
    expect(press(r, "n", {}, input)).toBe(false);
    expect(press(r, "Escape", {}, input)).toBe(true);
    const box = document.createElement("input");
    box.type = "checkbox";
    expect(press(r, "n", {}, box)).toBe(true);
    expect(n).toHaveBeenCalledOnce();
  });

  it("lists what is registered, once, and forgets what is removed", () => {
    const r = new ShortcutRegistry();
    const l = vi.fn();
    r.subscribe(l);
    const a = r.register({ keys: "n", description: "new", run: () => {} });
    r.register({ keys: "n", description: "new", run: () => {} }); // a second mount
    const b = r.register({ keys: "x", description: "other", group: "Chat", when: () => false, run: () => {} });
    expect(r.list().map((s) => s.keys)).toEqual(["n", "x"]);
    expect(press(r, "x")).toBe(false); // not active
    a();
    b();
    expect(r.list().map((s) => s.keys)).toEqual(["n"]);
    expect(l).toHaveBeenCalledTimes(5);
  });

  it("renders keys for people", () => {
    expect(keyLabels("g s")).toEqual([["g"], ["s"]]);
    expect(keyLabels("shift+Escape")).toEqual([["Shift", "Esc"]]);
  });
});
