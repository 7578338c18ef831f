import { useSyncExternalStore } from "react";

// narrowScreen is where the layout gives the conversation the screen: the
// session list becomes a drawer and a session's actions fold into one
// menu (phones, and tablets held upright). styles.css uses the same
// width.
export const narrowScreen = "(max-width: 900px)";

// useMediaQuery reports whether the media query matches, and follows it.
// Without matchMedia (a test's DOM) nothing matches.
export function useMediaQuery(query: string): boolean {
  return useSyncExternalStore(
    (onChange) => {
      if (typeof window.matchMedia !== "function") return () => {};
      const mq = window.matchMedia(query);
      mq.addEventListener("change", onChange);
      return () => mq.removeEventListener("change", onChange);
    },
    () => typeof window.matchMedia === "function" && window.matchMedia(query).matches,
  );
}
