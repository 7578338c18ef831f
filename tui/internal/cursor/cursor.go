// Package cursor is the selection of a scrolling list: which row is
// selected and which rows fit on the screen around it.
package cursor

// Cursor selects one of n rows and remembers the first row shown, so the
// list scrolls only when the selection would leave the screen.
type Cursor struct {
	index, top int
}

// Index is the selected row.
func (c *Cursor) Index() int { return c.index }

// Set selects row i of n.
func (c *Cursor) Set(i, n int) {
	c.index = i
	c.clamp(n)
}

// Move selects the row delta rows away, staying within n rows.
func (c *Cursor) Move(delta, n int) { c.Set(c.index+delta, n) }

// Window returns the rows [from, to) to show in height lines, scrolled
// just enough to keep the selection in view.
func (c *Cursor) Window(height, n int) (from, to int) {
	c.clamp(n)
	if height <= 0 || n == 0 {
		return 0, 0
	}
	if c.index < c.top {
		c.top = c.index
	}
	if c.index >= c.top+height {
		c.top = c.index - height + 1
	}
	// A list that shrank leaves no blank lines under its last row.
	c.top = max(0, min(c.top, n-height))
	return c.top, min(n, c.top+height)
}

func (c *Cursor) clamp(n int) {
	c.index = max(0, min(c.index, n-1))
}
