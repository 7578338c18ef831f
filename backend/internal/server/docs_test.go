package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/apijson"
	"github.com/agents-os/agents/backend/internal/events/sse"
	"github.com/agents-os/agents/tools/fakellm"
)

// docExample is a curl command of the docs and, when a ```json block
// follows its ```sh block, the answer it prints.
type docExample struct {
	line    int
	command string
	want    string
}

// docExamples reads the ```sh blocks of a markdown file: every line that
// runs curl (after an optional "$ "), each with the ```json block right
// after its block, if any, as the answer of the block's last command.
func docExamples(t *testing.T, path string) []docExample {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []docExample
	var fence string // the open block's language; "" outside one
	var body strings.Builder
	lastSh := -1 // index in out after which a json block belongs, -1 for none
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case fence == "" && strings.HasPrefix(line, "```"):
			fence = strings.TrimPrefix(line, "```")
			body.Reset()
			if fence != "json" {
				lastSh = -1
			}
		case fence != "" && line == "```":
			if fence == "json" && lastSh >= 0 {
				out[lastSh].want = body.String()
			}
			lastSh = -1
			if fence == "sh" && len(out) > 0 && out[len(out)-1].want == "" {
				lastSh = len(out) - 1
			}
			fence = ""
		case fence == "sh":
			cmd := strings.TrimPrefix(line, "$ ")
			if strings.HasPrefix(cmd, "curl ") {
				if i := strings.Index(cmd, "  #"); i >= 0 {
					cmd = strings.TrimSpace(cmd[:i])
				}
				out = append(out, docExample{line: n, command: cmd})
			}
		case fence != "":
			body.WriteString(line + "\n")
		case strings.TrimSpace(line) != "":
			lastSh = -1 // prose between the blocks: the json is not an answer
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTheProtocolDocsExamplesRun runs every curl line of docs/protocol.md
// with the real curl against a real server and compares what it prints
// with the JSON the docs show after it; ids and times may differ.
func TestTheProtocolDocsExamplesRun(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl on this machine")
	}
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "Hello! What can I do for you?"}}, withAgentsDir("testdata/docs"))
	host := strings.TrimPrefix(e.http.URL, "http://")
	examples := docExamples(t, "../../../docs/protocol.md")
	if len(examples) < 3 {
		t.Fatalf("docs/protocol.md has %d curl examples", len(examples))
	}
	id := ""
	for _, ex := range examples {
		cmd := strings.ReplaceAll(ex.command, "localhost:7420", host)
		c := exec.Command("bash", "-c", cmd)
		c.Env = append(os.Environ(), "ID="+id)
		got, err := c.Output()
		if err != nil {
			t.Errorf("line %d: %s: %v", ex.line, ex.command, err)
			continue
		}
		var answer any
		if err := decodeJSON(got, &answer); err != nil {
			t.Errorf("line %d: %s printed %s, not JSON", ex.line, ex.command, got)
			continue
		}
		if obj, ok := answer.(map[string]any); ok {
			if s, ok := obj["id"].(string); ok && id == "" {
				id = s // the session the examples that follow use as $ID
			}
			if ex.want == "" && obj["code"] != nil && obj["reason"] != nil {
				t.Errorf("line %d: %s failed: %s", ex.line, ex.command, got)
			}
		}
		if ex.want == "" {
			continue
		}
		if string(got) != ex.want && !sameAllowingIDsAndTimes(t, ex.want, answer) {
			t.Errorf("line %d: %s printed\n%s\nthe docs show\n%s", ex.line, ex.command, got, ex.want)
		}
	}
}

// The SSE frames docs/protocol.md shows (its ```text blocks that start
// with an id) are what the server writes for the events they decode to,
// byte for byte.
func TestTheProtocolDocsEventFramesAreTheServers(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```text\n(id: .*?)```").FindAllStringSubmatch(string(doc), -1)
	kinds := map[string]bool{}
	for _, b := range blocks {
		for _, frame := range strings.SplitAfter(b[1], "\n\n") {
			if frame == "" {
				continue
			}
			var data string
			for _, line := range strings.Split(frame, "\n") {
				if d, ok := strings.CutPrefix(line, "data: "); ok {
					data = d
				}
			}
			ev := &agentsv1.Event{}
			if err := apijson.Unmarshal([]byte(data), ev); err != nil {
				t.Errorf("the docs' frame\n%s: %v", frame, err)
				continue
			}
			got, err := sse.EventFrame(ev)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(frame, "\n\n") {
				frame += "\n"
			}
			if string(got) != frame {
				t.Errorf("the docs show the frame\n%sthe server writes\n%s", frame, got)
			}
			kinds[ev.GetKind()] = true
		}
	}
	for _, k := range []string{"run.stopped", "tool_call.delta"} {
		if !kinds[k] {
			t.Errorf("docs/protocol.md shows no %s frame", k)
		}
	}
}

var (
	uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	timePattern = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$`)
	// A duration, as the JSON routes write one (a model call's): it
	// differs from run to run as times do.
	durationPattern = regexp.MustCompile(`^(\d+h)?(\d+m)?[\d.]+(ns|µs|ms|s)$`)
)

// sameAllowingIDsAndTimes compares the docs' JSON with an answer: equal,
// except that an id, time or duration in the docs stands for any id,
// time or duration.
func sameAllowingIDsAndTimes(t *testing.T, doc string, answer any) bool {
	t.Helper()
	var want any
	if err := decodeJSON([]byte(doc), &want); err != nil {
		t.Errorf("the docs' JSON is not JSON: %v\n%s", err, doc)
		return false
	}
	return matches(want, answer)
}

func matches(want, got any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, v := range w {
			gv, ok := g[k]
			if !ok {
				return false
			}
			if k == "delta_seq" {
				if !sameDeltaSeq(v, gv) {
					return false
				}
			} else if !matches(v, gv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !matches(w[i], g[i]) {
				return false
			}
		}
		return true
	case string:
		g, ok := got.(string)
		for _, p := range []*regexp.Regexp{uuidPattern, timePattern, durationPattern} {
			if ok && p.MatchString(w) && p.MatchString(g) {
				return true
			}
		}
		// Ids inside text (unknown session 1234-…) vary too.
		return ok && uuidIn.ReplaceAllString(w, "ID") == uuidIn.ReplaceAllString(g, "ID")
	}
	return reflect.DeepEqual(want, got)
}

// decodeJSON reads one JSON value keeping its numbers exact: a delta_seq
// is past 2^53, where a float64 rounds it.
func decodeJSON(b []byte, v *any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if _, err := d.Token(); err != io.EOF {
		return errors.New("more than one JSON value")
	}
	return nil
}

// sameDeltaSeq compares a delta_seq of the docs with an answer's. Its
// bits above 33 are the tag the server process drew at random, so the
// docs' tag stands for any; the counter below them is compared exactly.
func sameDeltaSeq(want, got any) bool {
	wn, ok1 := want.(json.Number)
	gn, ok2 := got.(json.Number)
	if !ok1 || !ok2 {
		return reflect.DeepEqual(want, got)
	}
	w, err1 := strconv.ParseUint(wn.String(), 10, 64)
	g, err2 := strconv.ParseUint(gn.String(), 10, 64)
	const counter = 1<<33 - 1
	return err1 == nil && err2 == nil && w&counter == g&counter && (w > counter) == (g > counter)
}

var uuidIn = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
