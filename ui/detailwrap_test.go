package ui

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// The detail view wraps a long line at its spaces, never inside a
// timestamp or an id (lipgloss broke "2026-12-02T14:18:46Z" at its hyphen),
// and continues it under its indent plus two (it went back to column 0).
func TestHangingWrap(t *testing.T) {
	line := "  observed deletionTimestamp 2026-12-02T14:18:46Z: the end of the grace period"
	got := strings.Split(hangingWrap(line, 40), "\n")
	want := []string{
		"  observed deletionTimestamp",
		"    2026-12-02T14:18:46Z: the end of the",
		"    grace period",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("wrapped as\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The spaces that align a line's columns stay where it does not break.
	aligned := "    Pod now         uid 82a651ac  ip 10.244.3.7  phase Pending  node sim-node-3"
	if got, want := hangingWrap(aligned, 70), "    Pod now         uid 82a651ac  ip 10.244.3.7  phase Pending  node\n      sim-node-3"; got != want {
		t.Errorf("wrapped as\n%s\nwant\n%s", got, want)
	}
	if got := hangingWrap("short\n  also short", 40); got != "short\n  also short" {
		t.Errorf("lines that fit changed: %q", got)
	}
}

// Whatever the text and the width: no line is wider than the width (but
// for a character wider than the room), every word comes out in order,
// and only a word wider than a line is cut.
func TestHangingWrapKeepsEveryWordWithinTheWidth(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	words := []string{"a", "pod", "sbx-0", "2026-12-02T14:18:46Z", "16952042-4659-404b-af6a-1ad692ff3444", "é", "日本", strings.Repeat("x", 70)}
	for range 500 {
		width := 2 + rng.IntN(60)
		var lines []string
		for range 1 + rng.IntN(4) {
			line := strings.Repeat(" ", rng.IntN(6))
			for k := range rng.IntN(12) {
				if k > 0 {
					line += " "
				}
				line += words[rng.IntN(len(words))]
			}
			lines = append(lines, line)
		}
		in := strings.Join(lines, "\n")
		out := hangingWrap(in, width)
		for _, l := range strings.Split(out, "\n") {
			if w := ansi.StringWidth(l); w > width && !strings.Contains(l, "日本") {
				t.Fatalf("width %d: a line of %d: %q (from %q)", width, w, l, in)
			}
		}
		// The words, cut pieces joined again, are the input's.
		joined := strings.Join(strings.Fields(out), "")
		if joined != strings.Join(strings.Fields(in), "") {
			t.Fatalf("width %d: words changed:\n%q\n%q", width, in, out)
		}
	}
}
