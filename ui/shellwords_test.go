package ui

import (
	"slices"
	"testing"
)

func TestShellWords(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{`sh -c 'exit 7'`, []string{"sh", "-c", "exit 7"}},
		{`echo "a b"  c`, []string{"echo", "a b", "c"}},
		{`echo $HOME`, []string{"echo", "$HOME"}},
		{`python3 -c "print('hi')"`, []string{"python3", "-c", "print('hi')"}},
		{`  `, nil},
	} {
		got, err := shellWords(tc.line)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("shellWords(%q) = %q, %v; want %q", tc.line, got, err, tc.want)
		}
	}
	if _, err := shellWords(`echo 'unterminated`); err == nil {
		t.Error("an unterminated quote was accepted")
	}
}
