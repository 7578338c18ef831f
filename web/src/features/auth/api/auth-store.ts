// The bearer token of a server with auth: kept for the tab
// (sessionStorage) or remembered on this device on request (localStorage).
export interface AuthState {
  token?: string;
  // The token is in localStorage.
  remembered: boolean;
  // The server asked for a token (it refused a call): the app shows the
  // sign-in form until one is given.
  required: boolean;
  // Why the last token was let go, for the sign-in form.
  error?: string;
}

export interface TokenStorage {
  session: Pick<Storage, "getItem" | "setItem" | "removeItem">;
  local: Pick<Storage, "getItem" | "setItem" | "removeItem">;
}

const key = "agents.token";

// AuthStore holds the auth state and tells its listeners when it changes
// (for useSyncExternalStore).
export class AuthStore {
  private state: AuthState;
  private listeners = new Set<() => void>();

  constructor(private readonly storage: TokenStorage = { session: sessionStorage, local: localStorage }) {
    const session = read(storage.session);
    const local = read(storage.local);
    this.state = { token: session ?? local, remembered: !session && !!local, required: false };
  }

  getState = (): AuthState => this.state;

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  };

  // token is read by the transport at each call.
  token = (): string | undefined => this.state.token;

  signIn = (token: string, remember: boolean): void => {
    const t = token.trim();
    if (!t) return;
    this.clearStorage();
    write(remember ? this.storage.local : this.storage.session, t);
    this.set({ token: t, remembered: remember, required: false });
  };

  signOut = (): void => {
    this.clearStorage();
    this.set({ token: undefined, remembered: false, required: true });
  };

  // refused is what the transport calls when the server answers
  // unauthenticated: the token (if any) is let go and sign-in is asked for.
  refused = (): void => {
    if (this.state.required && !this.state.token) return;
    const had = !!this.state.token;
    this.clearStorage();
    this.set({
      token: undefined,
      remembered: false,
      required: true,
      error: had ? "The server did not accept the token." : undefined,
    });
  };

  private clearStorage() {
    remove(this.storage.session);
    remove(this.storage.local);
  }

  private set(s: AuthState) {
    this.state = s;
    for (const l of this.listeners) l();
  }
}

// Storage can throw (disabled cookies, private modes): the token then
// lives in memory only.
function read(s: TokenStorage["session"]): string | undefined {
  try {
    return s.getItem(key) ?? undefined;
  } catch {
    return undefined;
  }
}
function write(s: TokenStorage["session"], v: string) {
  try {
    s.setItem(key, v);
  } catch {
    /* memory only */
  }
}
function remove(s: TokenStorage["session"]) {
  try {
    s.removeItem(key);
  } catch {
    /* nothing stored */
  }
}
