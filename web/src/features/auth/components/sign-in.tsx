import { useId, useState, type FormEvent } from "react";
import { useAuth } from "../hooks/use-auth";

// SignIn asks for the server's token. It is kept for this tab unless
// "remember" is ticked.
export function SignIn() {
  const auth = useAuth();
  const [token, setToken] = useState("");
  const [remember, setRemember] = useState(false);
  const ids = { heading: useId(), token: useId(), hint: useId(), remember: useId() };
  function submit(e: FormEvent) {
    e.preventDefault();
    auth.signIn(token, remember);
  }
  return (
    <main className="sign-in" aria-labelledby={ids.heading}>
      <form onSubmit={submit} className="sign-in-form">
        <h1 id={ids.heading}>Sign in to agents</h1>
        <p id={ids.hint} className="muted">
          This server asks for a token. An operator gives it out (the server's <code>--auth-tokens</code> file).
        </p>
        {auth.error && (
          <p role="alert" className="error">
            {auth.error}
          </p>
        )}
        <div className="field">
          <label htmlFor={ids.token}>Token</label>
          <input
            id={ids.token}
            type="password"
            autoComplete="current-password"
            autoFocus
            required
            aria-describedby={ids.hint}
            value={token}
            onChange={(e) => setToken(e.target.value)}
          />
        </div>
        <div className="field check">
          <input id={ids.remember} type="checkbox" checked={remember} onChange={(e) => setRemember(e.target.checked)} />
          <label htmlFor={ids.remember}>Remember on this device</label>
        </div>
        <button type="submit" className="button primary" disabled={!token.trim()}>
          Sign in
        </button>
      </form>
    </main>
  );
}
