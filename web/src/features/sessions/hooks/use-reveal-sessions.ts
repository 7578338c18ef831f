import { createContext, useContext } from "react";

// RevealSessions shows the session list and then moves the focus into it
// with focus. Where the list is always on screen that is focus alone; on
// a narrow screen the layout opens its drawer first (a hidden element
// cannot take the focus) and calls focus once the drawer is open.
export const RevealSessions = createContext<(focus: () => void) => void>((focus) => focus());

export function useRevealSessions(): (focus: () => void) => void {
  return useContext(RevealSessions);
}
