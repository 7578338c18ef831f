package agentfile

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Loader loads agent files and their helper trees.
type Loader struct {
	// WorkDir is the directory relative input paths are resolved against.
	// It is also where a relative tool path is looked for when it does not
	// exist next to its agent file (agents-exe resolves tool paths against
	// the working directory). Error messages show files relative to it.
	// Empty means the process working directory.
	WorkDir string
}

// Load loads the agent files in files, and every *.json file directly
// inside each directory of dirs, as root agents, together with their
// helpers. See Loader.Load.
func Load(files, dirs []string) *Set {
	return Loader{}.Load(files, dirs)
}

// Load loads the agent files in files, and every *.json file directly
// inside each directory of dirs, as root agents, together with their
// helpers (recursively: extraAgents, and agent files inside toolDirectory
// and FileSystemDirectory toolboxes). Each file is read once, however many
// agents name it, so cycles are fine.
//
// Bad files do not stop the others: the Set holds every agent that loaded
// and one Error per bad file. An agent whose helper cannot be loaded is
// itself rejected, since it would run without a helper its prompt expects.
// A JSON file with neither "tag" nor "contents" found in a directory is not
// an agent file: it is skipped with a warning.
func (l Loader) Load(files, dirs []string) *Set {
	ld := &loading{work: l.workDir(), byKey: map[string]*node{}}
	for _, f := range files {
		ld.addRootFile(absolute(ld.work, f))
	}
	for _, dir := range dirs {
		ld.addRootDir(absolute(ld.work, dir))
	}
	ld.discover()
	ld.settleNonAgents()
	ld.checkSlugs()
	ld.checkHelpers()
	return ld.result()
}

func (l Loader) workDir() string {
	if l.WorkDir != "" {
		if abs, err := filepath.Abs(l.WorkDir); err == nil {
			return abs
		}
		return l.WorkDir
	}
	if wd, err := os.Getwd(); err == nil {
		return wd
	}
	return "."
}

// loading is the state of one Load call.
type loading struct {
	work        string
	nodes       []*node // in discovery order: roots first, then breadth-first
	byKey       map[string]*node
	inputErrors []*Error
	warnings    []*Error
}

// node is one agent file.
type node struct {
	path  string // absolute
	shown string // as error messages show it

	root      bool // a root agent
	namedRoot bool // a root named as a file, not found in a directory
	scanned   bool // found in a directory
	parsed    *parsed
	err       *Error // the one error reported for this file
	notAgent  bool   // JSON, but not an agent file
	skipped   bool   // not an agent file, found in a directory: ignored
	warnings  []*Error
	edges     []edge
}

func (n *node) ok() bool { return n.parsed != nil && n.err == nil }

// edge is a helper declared by a node.
type edge struct {
	field   string    // the declaring field
	extra   *extraRef // the extraAgents entry; nil for helpers found in a directory
	target  *node     // nil when the declared file does not exist
	written string
}

func (ld *loading) nodeFor(path string) *node {
	key := path
	if real, err := filepath.EvalSymlinks(path); err == nil {
		key = real
	}
	if n, ok := ld.byKey[key]; ok {
		return n
	}
	n := &node{path: path, shown: displayPath(ld.work, path)}
	ld.byKey[key] = n
	ld.nodes = append(ld.nodes, n)
	return n
}

func (ld *loading) addRootFile(path string) {
	if _, err := os.Stat(path); err != nil {
		ld.inputErrors = append(ld.inputErrors, &Error{File: displayPath(ld.work, path), Reason: readReason(err)})
		return
	}
	n := ld.nodeFor(path)
	n.root, n.namedRoot = true, true
}

func (ld *loading) addRootDir(dir string) {
	files, err := jsonFiles(dir)
	if err != nil {
		ld.inputErrors = append(ld.inputErrors, &Error{File: displayPath(ld.work, dir), Reason: err.Error()})
		return
	}
	for _, f := range files {
		n := ld.nodeFor(f)
		n.root, n.scanned = true, true
	}
}

// discover reads every file reachable from the roots, breadth-first.
// Nodes are appended to ld.nodes as they are found, so ranging by index
// visits each exactly once and terminates on cycles.
func (ld *loading) discover() {
	for i := 0; i < len(ld.nodes); i++ {
		n := ld.nodes[i]
		data, err := os.ReadFile(n.path)
		if err != nil {
			n.err = &Error{Reason: readReason(err)}
			continue
		}
		p, warnings, perr, notAgent := parse(data, n.path, ld.work)
		n.warnings, n.err, n.notAgent = warnings, perr, notAgent
		if perr != nil {
			continue
		}
		n.parsed = p
		for _, sd := range p.scanDirs {
			ld.scanHelpers(n, sd)
		}
		for i := range p.extras {
			ref := &p.extras[i]
			e := edge{field: ref.pathField(), extra: ref, written: ref.written}
			if _, err := os.Stat(ref.path); err == nil {
				e.target = ld.nodeFor(ref.path)
			}
			n.edges = append(n.edges, e)
		}
	}
}

func (ld *loading) scanHelpers(n *node, sd scanDir) {
	files, err := jsonFiles(sd.dir)
	if err != nil {
		n.warnings = append(n.warnings, &Error{Field: sd.field, Reason: err.Error()})
		return
	}
	for _, f := range files {
		target := ld.nodeFor(f)
		target.scanned = true
		n.edges = append(n.edges, edge{field: sd.field, target: target, written: displayPath(ld.work, f)})
	}
}

// settleNonAgents decides what a JSON file that is not an agent file means:
// an error when it was named explicitly as a root; otherwise it is skipped,
// with a warning when a directory listing brought it in (an extraAgents
// entry naming it reports the error instead, on the referring file).
func (ld *loading) settleNonAgents() {
	for _, n := range ld.nodes {
		if !n.notAgent || n.namedRoot {
			continue
		}
		n.err, n.skipped = nil, true
		if n.scanned {
			ld.warnings = append(ld.warnings, &Error{File: n.shown, Reason: "not an agent file (no \"tag\"); skipped"})
		}
	}
}

// checkSlugs rejects every file whose slug an earlier file already has.
// Roots come first in discovery order, so they win over helpers.
func (ld *loading) checkSlugs() {
	owner := map[string]*node{}
	for _, n := range ld.nodes {
		if !n.ok() {
			continue
		}
		slug := n.parsed.agent.Slug
		if first, taken := owner[slug]; taken {
			n.err = &Error{Field: "contents.slug", Reason: fmt.Sprintf("duplicate slug %q, already defined in %s", slug, first.shown)}
			continue
		}
		owner[slug] = n
	}
}

// checkHelpers rejects every agent with a helper that cannot be loaded,
// until nothing changes: rejecting a helper rejects the agents above it.
func (ld *loading) checkHelpers() {
	for changed := true; changed; {
		changed = false
		for _, n := range ld.nodes {
			if !n.ok() {
				continue
			}
			for _, e := range n.edges {
				if problem := helperProblem(e); problem != nil {
					n.err = problem
					changed = true
					break
				}
			}
			if n.err == nil {
				if problem := toolClash(n); problem != nil {
					n.err = problem
					changed = true
				}
			}
		}
	}
}

// helperProblem says what is wrong with the helper e declares, if anything.
func helperProblem(e edge) *Error {
	switch {
	case e.target == nil:
		return &Error{Field: e.field, Reason: fmt.Sprintf("%q does not exist", e.written)}
	case e.target.skipped && e.extra != nil:
		return &Error{Field: e.field, Reason: fmt.Sprintf("%q is not an agent file (no \"tag\")", e.written)}
	case e.target.skipped:
		return nil
	case !e.target.ok():
		return &Error{Field: e.field, Reason: fmt.Sprintf("helper %s did not load", e.target.shown)}
	case e.extra != nil && e.extra.slug != e.target.parsed.agent.Slug:
		return &Error{Field: e.extra.slugField(), Reason: fmt.Sprintf("%q does not match the slug %q of %s", e.extra.slug, e.target.parsed.agent.Slug, e.target.shown)}
	case e.extra != nil:
		return bindingProblem(e.extra, e.target.parsed.agent)
	}
	return nil
}

// bindingProblem checks an entry's bindings against its helper: each
// names the helper tool's "prompt" or a param the helper declares. A
// secret param is refused: secrets come with a session, never from a
// file, and bindings are stored with the child.
func bindingProblem(ref *extraRef, helper *Agent) *Error {
	params := map[string]Param{}
	var names []string
	for _, p := range helper.Params {
		params[p.Name] = p
		if !p.Secret {
			names = append(names, p.Name)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(ref.bindings)) {
		if key == PromptBinding {
			continue
		}
		p, ok := params[key]
		field := ref.field("bindings." + key)
		switch {
		case !ok:
			return &Error{Field: field, Reason: fmt.Sprintf("the helper %s has no argument or param %q (bind %q or one of its params: %s)", helper.Slug, key, PromptBinding, orNone(names))}
		case p.Secret:
			return &Error{Field: field, Reason: fmt.Sprintf("%q is a secret param of %s: secrets come with a session's params, never from an agent file", key, helper.Slug)}
		}
	}
	return nil
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// toolClash refuses two helper entries offering one tool name when one of
// them is narrowed: the model could call only one of them, and which
// narrowing applied would be a matter of order. (A helper found in a
// directory and listed again plainly in extraAgents is one tool.)
func toolClash(n *node) *Error {
	seen := map[string]HelperTool{}
	fields := map[string]string{}
	for _, e := range n.edges {
		t, ok := e.tool()
		if !ok {
			continue
		}
		prev, taken := seen[t.Name]
		if !taken {
			seen[t.Name], fields[t.Name] = t, e.field
			continue
		}
		if t.Narrowed() || prev.Narrowed() || prev.Slug != t.Slug {
			field := e.field
			if e.extra != nil {
				field = e.extra.field("slug")
				if e.extra.as != "" {
					field = e.extra.field("as")
				}
			}
			return &Error{Field: field, Reason: fmt.Sprintf("the tool prompt_agent_%s is already offered by %s; give this entry an \"as\" of its own", t.Name, fields[t.Name])}
		}
	}
	return nil
}

// tool is the helper tool the edge declares, when its helper loaded.
func (e edge) tool() (HelperTool, bool) {
	if e.target == nil || !e.target.ok() {
		return HelperTool{}, false
	}
	slug := e.target.parsed.agent.Slug
	if e.extra != nil {
		return e.extra.tool(slug), true
	}
	return HelperTool{Slug: slug, Name: slug}, true
}

func (ld *loading) result() *Set {
	s := &Set{agents: map[string]*Agent{}, rejected: map[string]*Error{}}
	s.Errors = append(s.Errors, ld.inputErrors...)
	for _, n := range ld.nodes {
		switch {
		case n.ok():
			a := n.parsed.agent
			s.agents[a.Slug] = a
			if n.root {
				s.roots = append(s.roots, a.Slug)
			}
			// By field, as problems are listed everywhere.
			slices.SortStableFunc(n.warnings, func(x, y *Error) int { return strings.Compare(x.Field, y.Field) })
			for _, w := range n.warnings {
				w.File = n.shown
				s.Warnings = append(s.Warnings, w)
			}
			a.Warnings = n.warnings
		case n.err != nil:
			n.err.File = n.shown
			s.Errors = append(s.Errors, n.err)
			if n.parsed != nil {
				s.rejected[n.parsed.agent.Slug] = n.err
			}
		}
	}
	s.Warnings = append(s.Warnings, ld.warnings...)
	for _, n := range ld.nodes {
		if n.ok() {
			n.parsed.agent.Helpers = helperSlugs(n)
			n.parsed.agent.HelperTools = helperTools(n)
		}
	}
	assignParents(s.agents, s.roots)
	return s
}

func helperSlugs(n *node) []string {
	var slugs []string
	seen := map[string]bool{}
	for _, e := range n.edges {
		if e.target == nil || !e.target.ok() {
			continue
		}
		slug := e.target.parsed.agent.Slug
		if !seen[slug] {
			seen[slug] = true
			slugs = append(slugs, slug)
		}
	}
	return slugs
}

// helperTools lists the node's helper tools, one per name (toolClash
// made sure a repeated name is the same plain helper).
func helperTools(n *node) []HelperTool {
	var tools []HelperTool
	seen := map[string]bool{}
	for _, e := range n.edges {
		t, ok := e.tool()
		if ok && !seen[t.Name] {
			seen[t.Name] = true
			tools = append(tools, t)
		}
	}
	return tools
}

// assignParents sets each helper's Parent to the first agent that reaches
// it, breadth-first from the roots; roots have no parent.
func assignParents(agents map[string]*Agent, roots []string) {
	visited := map[string]bool{}
	queue := make([]string, 0, len(agents))
	for _, slug := range roots {
		agents[slug].Parent = ""
		visited[slug] = true
		queue = append(queue, slug)
	}
	for len(queue) > 0 {
		current := agents[queue[0]]
		queue = queue[1:]
		for _, slug := range current.Helpers {
			if visited[slug] {
				continue
			}
			visited[slug] = true
			agents[slug].Parent = current.Slug
			queue = append(queue, slug)
		}
	}
}
