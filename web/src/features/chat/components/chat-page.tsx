import { useParams } from "react-router";

// ChatPage is one session: its conversation, composer and controls.
export function ChatPage() {
  const { id } = useParams();
  return <h1>{id}</h1>;
}
