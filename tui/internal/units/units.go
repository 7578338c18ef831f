// Package units writes the sizes and counts the screens show, short and
// for people: 12.3 KB, 950, 12.3k, 1.2M.
package units

import (
	"fmt"
	"time"
)

// Bytes is a byte count.
func Bytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
}

// Tokens is a token count.
func Tokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d", n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	default:
		return fmt.Sprintf("%.1fM", float64(n)/1_000_000)
	}
}

// Count is n of a thing, in the singular for one: "1 call", "2 calls".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// USD is an amount in US dollars, with the cents shown, and more digits
// below a cent so a cheap session does not show as free.
func USD(x float64) string {
	switch {
	case x == 0:
		return "$0"
	case x < 0.01:
		return fmt.Sprintf("$%.4f", x)
	case x < 1000:
		return fmt.Sprintf("$%.2f", x)
	default:
		return fmt.Sprintf("$%.0f", x)
	}
}

// Grouped is a count in full, its thousands grouped: 38,204.
func Grouped(n int64) string {
	s := fmt.Sprintf("%d", n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var b []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	if neg {
		return "-" + string(b)
	}
	return string(b)
}

// Age is how long ago something happened, in the fewest characters that
// stay readable: "now" for the last few seconds, then 15s, 4m, 3h, 2d, so
// that sessions made seconds apart read apart. A moment ahead of the
// clock (a server's clock a little fast) is now.
func Age(d time.Duration) string {
	switch {
	case d < 5*time.Second:
		return "now"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	default:
		return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
	}
}
