package cli

import (
	"bytes"
	"strings"
	"testing"
)

// Run as kubectl's plugin (a binary or symlink named kubectl-sandscope),
// usage and help say "kubectl sandscope"; run as sandscope, they do not.
func TestPluginName(t *testing.T) {
	for _, tc := range []struct {
		argv0, want, notWant string
	}{
		{"/usr/local/bin/kubectl-sandscope", "kubectl sandscope get sandboxes|pods", "\n  sandscope get"},
		{"kubectl-sandscope.exe", "kubectl sandscope get sb -A", "\n  sandscope get"},
		{"/opt/bin/sandscope", "\n  sandscope get sandboxes|pods", "kubectl sandscope"},
	} {
		var out, errOut bytes.Buffer
		if code := MainAs(tc.argv0, []string{"get", "--help"}, strings.NewReader(""), &out, &errOut); code != ExitOK {
			t.Fatalf("%s get --help: exit %d: %s", tc.argv0, code, errOut.String())
		}
		if !strings.Contains(out.String(), tc.want) || strings.Contains(out.String(), tc.notWant) {
			t.Errorf("%s get --help: want %q and not %q in:\n%s", tc.argv0, tc.want, tc.notWant, out.String())
		}
	}
}

// kubectl (1.26 and later) completes a plugin's arguments by running
// kubectl_complete-sandscope with them: that name is cobra's __complete.
func TestPluginCompletionHelper(t *testing.T) {
	var out, errOut bytes.Buffer
	code := MainAs("/usr/local/bin/kubectl_complete-sandscope", []string{"get", "po"}, strings.NewReader(""), &out, &errOut)
	if code != ExitOK || !strings.HasPrefix(out.String(), "pods\n") || !strings.Contains(out.String(), ":4") {
		t.Errorf("kubectl_complete-sandscope get po: exit %d\n%s%s", code, out.String(), errOut.String())
	}
}
