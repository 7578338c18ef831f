import { screen } from "@testing-library/react";
import { useLocation } from "react-router";

// Where shows the page's path and query, for the tests that navigate:
// render it inside the router, and read it with where().
export function Where() {
  const l = useLocation();
  return <output aria-label="Location">{l.pathname + l.search}</output>;
}

export const where = () => screen.getByLabelText("Location").textContent;
