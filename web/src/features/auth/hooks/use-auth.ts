import { useMemo } from "react";

// The bearer token of a server with auth: kept for the tab
// (sessionStorage) or remembered on request (localStorage).
export interface Auth {
  token(): string | undefined;
  signIn(token: string, remember: boolean): void;
  signOut(): void;
}

const key = "agents.token";

export function useAuth(): Auth {
  return useMemo<Auth>(
    () => ({
      token: () => sessionStorage.getItem(key) ?? localStorage.getItem(key) ?? undefined,
      signIn(token, remember) {
        (remember ? localStorage : sessionStorage).setItem(key, token);
      },
      signOut() {
        sessionStorage.removeItem(key);
        localStorage.removeItem(key);
      },
    }),
    [],
  );
}
