// What each control does to the run and to the tools running in it, in
// one line: the buttons' tooltips, and what the phone's action menu says
// under each of them.
export const controlHelp = {
  pause: "Stop at the next step: the model's answer and the running tools finish first. Resume goes on from there.",
  resume: "Go on with the run from where it stopped.",
  resumeBlocked: "A pending call waits for its answer: answer it below and the run goes on.",
  cancelRun: "End the run now: the model's answer and the running tools are cancelled, and the session is ready for a new message.",
  hardCancel: "Cancel only the running tool calls: each tells the model it was cancelled, and the run goes on.",
  interrupt: "Cut the step short (the model's answer and the running tools are cancelled) and go on with this message; with nothing written, end the run.",
  fork: "Copy the session up to its newest turn into a new session.",
  continueWith: "Copy the session into a new one that another agent answers from here.",
  compact: "Send the older turns to the model as a summary from now on (a running session compacts before its next step). Nothing is deleted.",
} as const;
