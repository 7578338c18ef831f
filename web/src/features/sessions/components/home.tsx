// Home starts a new session with an agent picker.
export function Home() {
  return <h1>agents</h1>;
}
