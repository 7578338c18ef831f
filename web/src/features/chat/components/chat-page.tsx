// ChatPage is one session: its conversation, composer and controls, and
// its mailbox at /sessions/:id/mail.
//
// Stable hooks for the end-to-end tests (getByRole / getByLabel):
//   - the transcript: role "log" named "Conversation"; each turn an
//     "article" (named "<agent>, turn N", "You, turn N", "Tool results,
//     turn N"; the streamed answer "<agent>, answering")
//   - the composer: textbox "Message"; buttons "Send", "Interrupt",
//     "Attach"; each attachment chip a button "Remove <file name>"
//   - the session controls (toolbar "Session controls"): buttons "Pause"
//     or "Resume" (the server's status decides which), "Cancel run",
//     "Fork" (at the head) and "More", a menu button whose menu "More"
//     has the menuitems "Hard cancel", "Compact", "Continue with…" (a
//     dialog "Continue with another agent" with combobox "Agent to
//     continue with" and button "Continue"), "Rename" (a form "Rename the
//     session" with textbox "Session title", "Save", "Cancel"),
//     "Budget", "Export" and "Delete"; the delete dialog is an
//     "alertdialog" with "Cancel" and "Delete session" (or "Delete with
//     N sub-sessions")
//   - on a narrow screen (lib/media-query.ts) the toolbar is the panel
//     of a button "Actions", hidden until it is pressed, where every
//     control is a button (the agent to continue with a combobox); the
//     app's bar has a button "Sessions" that opens the session list as a
//     drawer
//   - a fork that ends with a question: region "Not answered yet" with
//     button "Run"
//   - a session the server does not have: heading "No such session" and
//     link "Back to the start page", nothing else
//   - per turn: button "Fork here"
//   - the status: role "status" named "Status: <ready|running|waiting|
//     paused|failed>"
//   - the draft: region "Draft" with buttons "Edit" / "Collapse", "Send
//     now", "Clear" and, expanded, textbox "Draft text"
//   - the pending calls: region "Pending calls"; per call a form "Answer
//     <tool>" with textbox "Result" and buttons "Answer" / "Fail"
//   - tool cards: role "group" named by the tool name; a helper call's
//     link "Open the <agent> session" goes to /sessions/CHILD
//   - the views: navigation "Session views" with links "Conversation" and
//     "Mail"; the mail tab: textbox "Mail text", checkbox "Urgent…",
//     button "Send mail", radios "All" / "Pending", list "Mail list"
//   - session params: a details "Session params" with one input per
//     param labelled by its name (password inputs for secrets)
//   - keys: Enter sends, Shift+Enter is a new line, Escape leaves the
//     composer; Alt+I interrupts, Alt+P pauses or resumes
//   - budgets (a server that keeps them): the tree's spend, a list
//     named "Budget" in the header (in the Actions panel on a narrow
//     screen); button "Budget" in the controls, opening the dialog
//     "Session budget" with a form "Set the session budget" (textboxes
//     "Most tokens", "Most US dollars"; buttons "Save and resume" after
//     a stop, "Save", "Cancel"); a run stopped at a budget: alert
//     "Budget spent" with button "Raise the budget" (the tree's) or
//     link "usage" and button "Resume now" (the owner's)

import { useParams } from "react-router";
import "./chat.css";
import { ChatSession } from "./chat-session";

export function ChatPage() {
  const { id } = useParams();
  if (!id) return null;
  // A new session is a new state: keyed by id, nothing leaks across.
  return <ChatSession key={id} id={id} />;
}
