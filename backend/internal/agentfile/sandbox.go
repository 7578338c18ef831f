package agentfile

import "path/filepath"

// Sandbox is an agent's "sandbox" object: how its tool processes are
// confined (see package sandbox). Its zero value is no object: the
// defaults.
type Sandbox struct {
	// Written says the file has a "sandbox" object.
	Written bool
	// Disabled runs the agent's tools unconfined.
	Disabled bool
	// Required refuses to load the agent where the tools cannot be
	// confined, rather than run them unconfined.
	Required bool
	// Network, when set, says whether the tools may use the network;
	// nil: each tool kind's default.
	Network *bool
	// Readable and Writable are more folders or files the tools may read,
	// or read and write; absolute.
	Readable []string
	Writable []string
	Limits   SandboxLimits
}

// SandboxLimits bound each tool process; zero: the server's default.
type SandboxLimits struct {
	CPUSeconds int64
	MemoryMB   int64
	Processes  int64
	FileSizeMB int64
}

// minSandboxProcesses is the fewest processes a tool can be limited to:
// the kernel caps a PID namespace at no fewer.
const minSandboxProcesses = 300

// sandbox reads "sandbox": {enabled, required, network, readable,
// writable, limits: {cpuSeconds, memoryMB, processes, fileSizeMB}}.
// Relative paths are the agent file's folder's.
func (d *decoder) sandbox(c *object, where places) Sandbox {
	raw, ok := c.get("sandbox")
	if !ok {
		return Sandbox{}
	}
	o := d.object(c.field("sandbox"), raw)
	if d.failed() {
		return Sandbox{}
	}
	s := Sandbox{Written: true}
	s.Disabled = !d.optionalBool(o, "enabled", true)
	s.Required = d.optionalBool(o, "required", false)
	if d.failed() {
		return Sandbox{}
	}
	if s.Disabled && s.Required {
		d.failf(o.field("required"), "a sandbox that is required cannot be disabled (\"enabled\": false)")
		return Sandbox{}
	}
	if _, ok := o.get("network"); ok {
		network := d.optionalBool(o, "network", false)
		s.Network = &network
	}
	paths := func(key string) []string {
		raw, ok := o.get(key)
		if !ok {
			return nil
		}
		var out []string
		for i, p := range d.strings(o.field(key), raw) {
			switch {
			case p == "":
				d.failf(index(o.field(key), i), "empty path")
			case filepath.IsAbs(p):
				out = append(out, filepath.Clean(p))
			default:
				out = append(out, filepath.Join(where.fileDir, p))
			}
		}
		return out
	}
	s.Readable, s.Writable = paths("readable"), paths("writable")
	if raw, ok := o.get("limits"); ok {
		l := d.object(o.field("limits"), raw)
		if d.failed() {
			return Sandbox{}
		}
		s.Limits = SandboxLimits{
			CPUSeconds: d.tokens(l, "cpuSeconds", 1),
			MemoryMB:   d.tokens(l, "memoryMB", 1),
			Processes:  d.tokens(l, "processes", 1),
			FileSizeMB: d.tokens(l, "fileSizeMB", 1),
		}
		if !d.failed() && s.Limits.Processes != 0 && s.Limits.Processes < minSandboxProcesses {
			d.failf(l.field("processes"), "%d is fewer than %d, the fewest processes the kernel can limit a tool to", s.Limits.Processes, minSandboxProcesses)
		}
		d.warnUnread(l, noIgnoredFields)
	}
	d.warnUnread(o, noIgnoredFields)
	if d.failed() {
		return Sandbox{}
	}
	return s
}
