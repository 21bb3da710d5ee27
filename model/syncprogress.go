package model

import (
	"strconv"
	"strings"
)

// ListProgress is how far the initial list of one resource has come: what
// a person waiting for a large fleet to load reads in the header, and a
// one-shot command on stderr, instead of a bare "syncing…".
type ListProgress struct {
	// Resource is the plural resource name ("pods", "batchsandboxes").
	Resource string `json:"resource"`
	// Received counts the objects of the initial list received so far.
	Received int64 `json:"received"`
	// Total is how many the server says the list holds; nil when it has
	// not said (a streamed list announces no count).
	Total *int64 `json:"total,omitempty"`
	// PerSecond is the rate at which objects arrived since the list began.
	PerSecond float64 `json:"perSecond,omitempty"`
	// Done: the whole initial list has been received.
	Done bool `json:"done,omitempty"`
}

// SyncLine says how far each resource's initial list has come, e.g.
// "pods 12,400 of 50,000 · 4,100/s · batchsandboxes 3,000…". Resources that
// are done read "pods 50,000 ✓", or nothing when they hold no object.
func SyncLine(progress []ListProgress) string {
	parts := make([]string, 0, len(progress))
	for _, p := range progress {
		if p.Received == 0 && (p.Done || (p.Total != nil && *p.Total == 0)) {
			continue // an empty list says nothing worth the room
		}
		var b strings.Builder
		b.WriteString(p.Resource)
		b.WriteByte(' ')
		b.WriteString(Thousands(p.Received))
		if p.Total != nil && !p.Done {
			b.WriteString(" of ")
			b.WriteString(Thousands(max(*p.Total, p.Received)))
		}
		switch {
		case p.Done:
			b.WriteString(" ✓")
		case p.PerSecond >= 1:
			b.WriteString(" · ")
			b.WriteString(Thousands(int64(p.PerSecond + 0.5)))
			b.WriteString("/s")
		default:
			b.WriteString("…")
		}
		parts = append(parts, b.String())
	}
	return strings.Join(parts, " · ")
}

// SyncTotals sums the progress of every resource: objects received, and
// the total when the server said it for every resource not done (else 0).
// (A fleet whose lists are all empty is synced at once.)
func SyncTotals(progress []ListProgress) (received, total int64) {
	known := true
	for _, p := range progress {
		received += p.Received
		switch {
		case p.Done:
			total += p.Received
		case p.Total != nil:
			total += max(*p.Total, p.Received)
		default:
			known = false
		}
	}
	if !known {
		total = 0
	}
	return received, total
}

// Thousands writes n with a comma between groups of three digits.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
