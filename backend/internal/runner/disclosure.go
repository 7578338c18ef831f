package runner

// activeGroups returns the toolgroups the session has active, for its
// agent: what the session's history says (see the disclosure package),
// the one record of them, so a session loaded anywhere (after an
// eviction, a restart, on another server) offers the tools it offered.
// nil for an agent without toolgroups. Call it on the actor.
func (a *actor) activeGroups() map[string]bool {
	if a.agent == nil {
		return nil
	}
	return a.agent.ActiveGroups(a.st.turns)
}
