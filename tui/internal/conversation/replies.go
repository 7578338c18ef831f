package conversation

// Reply is the answer to a command a conversation screen ran. The shell
// hands it to the screens of Session, and to no other component. The
// first message of a new session goes before the session exists: its
// answer names none (""), and the screen of a new session that sent it
// knows it as its own.
type Reply interface {
	Session() string
	// reply keeps the replies to this package's own types.
	reply()
}

// The answers of a screen's commands, each checked to be a Reply.
var (
	_ Reply = sessionMsg{}
	_ Reply = agentsMsg{}
	_ Reply = postedMsg{}
	_ Reply = createdMsg{}
	_ Reply = controlMsg{}
	_ Reply = forkedMsg{}
	_ Reply = exportedMsg{}
	_ Reply = completedMsg{}
	_ Reply = compactedMsg{}
	_ Reply = completionMsg{}
	_ Reply = attachedMsg{}
	_ Reply = editorReadyMsg{}
	_ Reply = editorDoneMsg{}
	_ Reply = timelineTickMsg{}
	_ Reply = helperMsg{}
)

func (m sessionMsg) Session() string      { return m.id }
func (m agentsMsg) Session() string       { return m.id }
func (m postedMsg) Session() string       { return m.id }
func (m createdMsg) Session() string      { return "" }
func (m controlMsg) Session() string      { return m.id }
func (m forkedMsg) Session() string       { return m.id }
func (m exportedMsg) Session() string     { return m.id }
func (m completedMsg) Session() string    { return m.id }
func (m compactedMsg) Session() string    { return m.id }
func (m completionMsg) Session() string   { return m.id }
func (m attachedMsg) Session() string     { return m.id }
func (m editorReadyMsg) Session() string  { return m.id }
func (m editorDoneMsg) Session() string   { return m.id }
func (m timelineTickMsg) Session() string { return m.id }

func (sessionMsg) reply()      {}
func (agentsMsg) reply()       {}
func (postedMsg) reply()       {}
func (createdMsg) reply()      {}
func (controlMsg) reply()      {}
func (forkedMsg) reply()       {}
func (exportedMsg) reply()     {}
func (completedMsg) reply()    {}
func (compactedMsg) reply()    {}
func (completionMsg) reply()   {}
func (attachedMsg) reply()     {}
func (editorReadyMsg) reply()  {}
func (editorDoneMsg) reply()   {}
func (timelineTickMsg) reply() {}
