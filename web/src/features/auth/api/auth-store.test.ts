import { describe, expect, it, vi } from "vitest";
import { AuthStore, type TokenStorage } from "./auth-store";

function memory(): TokenStorage["session"] & { items: Map<string, string> } {
  const items = new Map<string, string>();
  return {
    items,
    getItem: (k) => items.get(k) ?? null,
    setItem: (k, v) => void items.set(k, v),
    removeItem: (k) => void items.delete(k),
  };
}

function store(init: { session?: string; local?: string } = {}) {
  const session = memory();
  const local = memory();
  if (init.session) session.items.set("agents.token", init.session);
  if (init.local) local.items.set("agents.token", init.local);
  return { s: new AuthStore({ session, local }), session, local };
}

describe("AuthStore", () => {
  it("keeps the token for the tab unless remembered", () => {
    const { s, session, local } = store();
    s.signIn(" t1 ", false);
    expect(s.getState()).toEqual({ token: "t1", remembered: false, required: false });
    expect(session.items.get("agents.token")).toBe("t1");
    expect(local.items.size).toBe(0);
    s.signIn("t2", true);
    expect(s.getState()).toMatchObject({ token: "t2", remembered: true });
    expect(local.items.get("agents.token")).toBe("t2");
    expect(session.items.size).toBe(0);
  });

  it("reads a remembered token at start", () => {
    expect(store({ local: "kept" }).s.getState()).toMatchObject({ token: "kept", remembered: true, required: false });
    expect(store({ session: "tab", local: "kept" }).s.getState()).toMatchObject({ token: "tab", remembered: false });
  });

  it("lets a refused token go and asks for another", () => {
    const { s, local } = store({ local: "old" });
    const l = vi.fn();
    s.subscribe(l);
    s.refused();
    expect(s.getState()).toMatchObject({ token: undefined, required: true, error: "The server did not accept the token." });
    expect(local.items.size).toBe(0);
    expect(l).toHaveBeenCalledOnce();
    s.refused(); // the other calls in flight say the same
    expect(l).toHaveBeenCalledOnce();
  });

  it("asks for a token without blaming one when there was none", () => {
    const { s } = store();
    s.refused();
    expect(s.getState()).toEqual({ token: undefined, remembered: false, required: true, error: undefined });
  });

  it("signs out", () => {
    const { s, session } = store({ session: "t" });
    s.signOut();
    expect(s.getState()).toMatchObject({ token: undefined, required: true });
    expect(session.items.size).toBe(0);
  });
});
