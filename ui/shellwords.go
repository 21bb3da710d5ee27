package ui

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/shell"
)

// shellWords splits a command line the way a POSIX shell splits a simple
// command's words: quotes group (`sh -c 'exit 7'` is three words) and are
// removed. Nothing is expanded from this machine: a $NAME stays the text
// $NAME, since the command runs in the sandbox, not here.
func shellWords(line string) ([]string, error) {
	words, err := shell.Fields(line, func(name string) string {
		if name == "IFS" {
			return "" // unset: split on blanks, as a shell does by default
		}
		return "$" + name
	})
	if err != nil {
		return nil, fmt.Errorf("cannot split %q into words: %s", line, strings.TrimSpace(err.Error()))
	}
	return words, nil
}
