// Package listing is what the tabs that list the server's things share:
// the list with its selection, drawn beside the selected thing in full,
// and the list one of them opens (a schedule's firings, a webhook's
// deliveries), with the notes each shows until it has rows.
package listing

import (
	"image/color"
	"strings"

	"charm.land/lipgloss/v2"
	"connectrpc.com/connect"

	"github.com/agents-os/agents/api/client"
	"github.com/agents-os/agents/tui/internal/cursor"
	"github.com/agents-os/agents/tui/internal/layout"
	"github.com/agents-os/agents/tui/internal/theme"
)

// Item is a thing the server lists and names by its id.
type Item interface{ GetId() string }

// List is a tab's things as last listed, with the selected one.
type List[T Item] struct {
	Items []T
	Cur   cursor.Cursor
	// Loaded says the things were listed at least once.
	Loaded bool
	// Err is why the last listing failed.
	Err error
	// None says the server keeps no such things (it does not serve them).
	None bool
}

// Take is a listing's answer: the things, keeping the selection on its
// thing, or why there are none.
func (l *List[T]) Take(items []T, err error) {
	if err != nil {
		l.None = connect.CodeOf(err) == connect.CodeUnimplemented
		l.Err = client.Describe(err)
		return
	}
	selected, at := "", l.Cur.Index()
	if x, ok := l.selected(); ok {
		selected = x.GetId()
	}
	l.Items = items
	for i, x := range items {
		if x.GetId() == selected {
			at = i
		}
	}
	l.Cur.Set(at, len(l.Items))
	l.Err, l.None, l.Loaded = nil, false, true
}

// Replace puts a thing's new state in the list.
func (l *List[T]) Replace(x T) {
	for i, y := range l.Items {
		if y.GetId() == x.GetId() {
			l.Items[i] = x
		}
	}
}

// Remove takes a deleted thing off the list.
func (l *List[T]) Remove(id string) {
	items := l.Items[:0:0]
	for _, x := range l.Items {
		if x.GetId() != id {
			items = append(items, x)
		}
	}
	l.Items = items
	l.Cur.Set(l.Cur.Index(), len(l.Items))
}

// ByID is the thing of that id; the zero T (nil) when none is.
func (l *List[T]) ByID(id string) (none T) {
	for _, x := range l.Items {
		if x.GetId() == id {
			return x
		}
	}
	return none
}

// Selected is the selected thing; the zero T (nil) when the list is
// empty.
func (l *List[T]) Selected() T {
	x, _ := l.selected()
	return x
}

func (l *List[T]) selected() (x T, ok bool) {
	if i := l.Cur.Index(); i < len(l.Items) {
		return l.Items[i], true
	}
	return x, false
}

// Move moves the selection delta rows.
func (l *List[T]) Move(delta int) { l.Cur.Move(delta, len(l.Items)) }

// Gate is what the tab shows in w×h cells before it has a list: that
// the server keeps no noun ("schedules"), why they cannot be listed, or
// that they load; ok is false once the list is there.
func (l *List[T]) Gate(st theme.AppStyles, noun string, w, h int) (string, bool) {
	switch {
	case l.None:
		return layout.Fit(st.Muted.Render("This server keeps no "+noun+"."), w, h), true
	case !l.Loaded && l.Err != nil:
		return layout.Fit(st.Error.Render("cannot list "+noun+": "+l.Err.Error()), w, h), true
	case !l.Loaded:
		return layout.Fit(st.Muted.Render("loading "+noun+"…"), w, h), true
	}
	return "", false
}

// Split is how a tab draws its listed things beside the selected one.
type Split[T Item] struct {
	// Noun is what the tab lists, as its error says: "schedules".
	Noun string
	// Empty is what the tab says when it lists nothing.
	Empty string
	// Row is a thing's row in the list: its title, and what is said of
	// it at the row's right.
	Row func(T) (string, layout.Seg)
	// Describe is the selected thing in full, in w cells.
	Describe func(x T, w int) string
	// Foot is a line under both (a question), "" for none.
	Foot string
}

// Render draws the list in w×h cells, the selected thing beside it, the
// last listing's error above them and the foot under them.
func (l *List[T]) Render(st theme.AppStyles, s Split[T], w, h int) string {
	var top []string
	if l.Err != nil {
		top = append(top, st.Error.Render("cannot list "+s.Noun+": "+l.Err.Error()))
	}
	if len(l.Items) == 0 {
		top = append(top, st.Muted.Render(s.Empty))
		return layout.Fit(strings.Join(top, "\n"), w, h)
	}
	bodyH := h - len(top)
	if s.Foot != "" {
		bodyH--
	}
	bodyH = max(0, bodyH)
	listW := min(44, max(20, w*2/5))
	detailW := max(0, w-listW-3)
	list := l.rows(st, s.Row, listW, bodyH)
	detail := strings.Split(layout.Fit(s.Describe(l.Selected(), detailW), detailW, bodyH), "\n")
	sep := st.Muted.Render(" │ ")
	lines := top
	for i := range bodyH {
		lines = append(lines, list[i]+sep+detail[i])
	}
	if s.Foot != "" {
		lines = append(lines, layout.Pad(s.Foot, w))
	}
	return layout.Fit(strings.Join(lines, "\n"), w, h)
}

// rows is the list in w×h cells, the rows the cursor's window shows.
func (l *List[T]) rows(st theme.AppStyles, row func(T) (string, layout.Seg), w, h int) []string {
	from, to := l.Cur.Window(h, len(l.Items))
	out := make([]string, 0, h)
	for i := from; i < to; i++ {
		pointer, bg := pointed(st, i == l.Cur.Index())
		title, right := row(l.Items[i])
		out = append(out, layout.Row(w, []layout.Seg{{Text: pointer, Style: st.Heading}, {Text: title, Style: st.Title}}, []layout.Seg{right}, bg))
	}
	for len(out) < h {
		out = append(out, strings.Repeat(" ", w))
	}
	return out
}

// Sub is the list one thing opens, newest first, while it is open.
type Sub[T any] struct {
	// ID is the thing it is the list of.
	ID     string
	Items  []T
	Cur    cursor.Cursor
	Loaded bool
	Err    error
}

// Open is the list of the thing of that id, before it is listed.
func Open[T any](id string) *Sub[T] { return &Sub[T]{ID: id} }

// Take is a listing's answer for the thing of that id; an answer for
// another thing, or after the list was closed, is dropped.
func (s *Sub[T]) Take(id string, items []T, err error) {
	if s == nil || s.ID != id {
		return
	}
	if err != nil {
		s.Err = client.Describe(err)
		return
	}
	s.Items, s.Err, s.Loaded = items, nil, true
	s.Cur.Set(s.Cur.Index(), len(s.Items))
}

// Move moves the selection delta rows.
func (s *Sub[T]) Move(delta int) { s.Cur.Move(delta, len(s.Items)) }

// Note is the line under the list's title: why it cannot be listed,
// that it loads, or empty when it has no noun ("deliveries"); ready
// says whether it has rows to show under it.
func (s *Sub[T]) Note(st theme.AppStyles, noun, empty string) (note string, ready bool) {
	switch {
	case s.Err != nil:
		note = st.Error.Render("cannot list " + noun + ": " + s.Err.Error())
	case !s.Loaded:
		note = st.Muted.Render("loading " + noun + "…")
	case len(s.Items) == 0:
		note = st.Muted.Render(empty)
	}
	return note, s.Loaded && len(s.Items) > 0
}

// Rows is the list in w×h cells, the rows the cursor's window shows:
// row is the text of the i-th and its style.
func (s *Sub[T]) Rows(st theme.AppStyles, row func(i int) (string, lipgloss.Style), w, h int) []string {
	from, to := s.Cur.Window(h, len(s.Items))
	var out []string
	for i := from; i < to; i++ {
		pointer, bg := pointed(st, i == s.Cur.Index())
		text, style := row(i)
		out = append(out, layout.Row(w, []layout.Seg{{Text: pointer, Style: st.Heading}, {Text: text, Style: style}}, nil, bg))
	}
	return out
}

// pointed is the pointer and background of a row, selected or not.
func pointed(st theme.AppStyles, selected bool) (string, color.Color) {
	if selected {
		return "› ", st.Selected.GetBackground()
	}
	return "  ", nil
}
