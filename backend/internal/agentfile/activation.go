package agentfile

// AlwaysActivated is the activation of a toolbox whose tools are always
// offered, the default.
const AlwaysActivated = "always"

// OnDemandTag is the tag of an on-demand activation.
const OnDemandTag = "on-demand"

// maxToolgroup bounds a toolgroup's name, which the meta tools list in
// their descriptions.
const maxToolgroup = 128

// activation reads a toolbox's activation, as agents-exe writes it:
// "always" (the default), or {"tag": "on-demand", "toolgroup": NAME},
// whose tools are offered only while the session's model has the group
// active (see the disclosure package). agents-exe decodes the key
// capitalised ("Activation"); its documentation and test agents write
// "activation": both are read. It returns the toolgroup, "" for a
// toolbox always offered.
func (d *decoder) activation(c *object) string {
	key, raw, ok := c.getFirst("Activation", "activation")
	if !ok || d.failed() {
		return ""
	}
	field := c.field(key)
	const want = `(want "always" or {"tag": "on-demand", "toolgroup": NAME})`
	if kindOf(raw) == "string" {
		if s := d.str(field, raw); !d.failed() && s != AlwaysActivated {
			d.failf(field, "unknown activation %q %s", s, want)
		}
		return ""
	}
	if kindOf(raw) != "object" {
		d.failf(field, "must be \"always\" or an object, got %s %s", kindOf(raw), want)
		return ""
	}
	o := d.object(field, raw)
	tag := d.requiredString(o, "tag")
	if !d.failed() && tag != OnDemandTag {
		d.failf(o.field("tag"), "unknown activation %q %s", tag, want)
	}
	group := d.requiredString(o, "toolgroup")
	if !d.failed() && (len(group) > maxToolgroup || !printable(group)) {
		d.failf(o.field("toolgroup"), "%q must be at most %d printable characters", group, maxToolgroup)
	}
	d.warnUnread(o, noIgnoredFields)
	return group
}

// printable reports whether s has no control characters.
func printable(s string) bool {
	for _, r := range s {
		if r < ' ' || r == 0x7f {
			return false
		}
	}
	return true
}
