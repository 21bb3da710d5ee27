package cli

import (
	"bytes"
	"strings"
	"testing"
)

// A bad flag gets the usage exit code of its command family, the parent's
// and every subcommand's alike (the README's exit code table).
func TestBadFlagExitCodes(t *testing.T) {
	for args, want := range map[string]int{
		"--bogus":                 2,
		"sweep --bogus":           2,
		"exec --bogus":            2,
		"explain restart --bogus": 2,
		"get sb --bogus":          2,
		"create --bogus":          3,
		"entrypoints --bogus":     3,
		"entrypoints ls --bogus":  3,
		"entrypoints set --bogus": 3,
	} {
		var out, errOut bytes.Buffer
		if code := Main(strings.Fields(args), strings.NewReader(""), &out, &errOut); code != want {
			t.Errorf("sandscope %s: exit %d, want %d (%s)", args, code, want, strings.TrimSpace(errOut.String()))
		}
	}
}
