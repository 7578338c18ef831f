import { useParams } from "react-router";

// AgentPage shows an agent's descriptor.
export function AgentPage() {
  const { slug } = useParams();
  return <h1>{slug}</h1>;
}
