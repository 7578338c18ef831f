import { createContext, useContext, useSyncExternalStore } from "react";
import { AuthStore, type AuthState } from "../api/auth-store";

// The app's auth store; tests give their own.
export const AuthContext = createContext<AuthStore | null>(null);

export function useAuthStore(): AuthStore {
  const store = useContext(AuthContext);
  if (!store) throw new Error("useAuthStore outside the app's providers");
  return store;
}

export interface Auth extends AuthState {
  signIn(token: string, remember: boolean): void;
  signOut(): void;
}

// useAuth is the auth state, re-rendering when it changes.
export function useAuth(): Auth {
  const store = useAuthStore();
  const state = useSyncExternalStore(store.subscribe, store.getState);
  return { ...state, signIn: store.signIn, signOut: store.signOut };
}
