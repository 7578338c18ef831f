import { useAuth } from "../hooks/use-auth";

// SignOutButton forgets the token; it shows only when there is one.
export function SignOutButton() {
  const auth = useAuth();
  if (!auth.token) return null;
  return (
    <button type="button" className="button" onClick={auth.signOut}>
      Sign out
    </button>
  );
}
