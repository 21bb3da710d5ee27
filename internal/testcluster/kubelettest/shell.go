package kubelettest

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// ShellExec is FakeExec, by the name the tests of shell wrappers know it.
func ShellExec(ctx context.Context, req ExecRequest) error { return FakeExec(ctx, req) }

func isShell(s string) bool {
	switch s {
	case "sh", "/bin/sh", "bash", "/bin/bash":
		return true
	}
	return false
}

// FakeShell interprets a tiny subset of sh, enough for command wrappers:
// words with '…' and "…" quoting, $? expansion, `;`, `( list )` subshells and
// the commands exit, echo, stderr (echo to stderr), sleep, cat, true, false
// and sh|bash -c SCRIPT. Any other command exits 0.
type FakeShell struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	NL             string // line ending for echo; default "\n"
	// Commands plays further commands by name (a container's tar, say);
	// each returns its exit status.
	Commands map[string]func(ctx context.Context, sh *FakeShell, argv []string) int
}

// Run interprets script and returns its exit status.
func (sh *FakeShell) Run(ctx context.Context, script string) int {
	toks, err := shellTokens(script)
	if err != nil {
		fmt.Fprintf(sh.Stderr, "sh: %v\n", err)
		return 2
	}
	rc, _ := sh.list(ctx, toks, 0)
	return rc
}

type shellToken struct {
	text string
	op   bool // ; ( )
}

// list runs commands until the end of toks or a closing parenthesis. It
// returns the last status and whether `exit` ended the (sub)shell.
func (sh *FakeShell) list(ctx context.Context, toks []shellToken, last int) (int, bool) {
	for len(toks) > 0 {
		t := toks[0]
		switch {
		case t.op && (t.text == ";" || t.text == ")"): // a stray ) is ignored
			toks = toks[1:]
			continue
		case t.op && t.text == "(":
			depth, end := 0, -1
			for i, u := range toks {
				if u.op && u.text == "(" {
					depth++
				} else if u.op && u.text == ")" {
					depth--
					if depth == 0 {
						end = i
						break
					}
				}
			}
			if end < 0 {
				fmt.Fprintln(sh.Stderr, "sh: unbalanced (")
				return 2, true
			}
			last, _ = sh.list(ctx, toks[1:end], last) // exit leaves only the subshell
			toks = toks[end+1:]
			continue
		}
		end := len(toks)
		for i, u := range toks {
			if u.op {
				end = i
				break
			}
		}
		words := make([]string, 0, end)
		for _, w := range toks[:end] {
			words = append(words, strings.ReplaceAll(w.text, "\x00?", strconv.Itoa(last)))
		}
		toks = toks[end:]
		var exited bool
		last, exited = sh.command(ctx, words, last)
		if exited {
			return last, true
		}
	}
	return last, false
}

func (sh *FakeShell) command(ctx context.Context, argv []string, last int) (int, bool) {
	if len(argv) == 0 {
		return last, false
	}
	nl := sh.NL
	if nl == "" {
		nl = "\n"
	}
	if play, ok := sh.Commands[argv[0]]; ok {
		return play(ctx, sh, argv), false
	}
	switch argv[0] {
	case "exit":
		code := last
		if len(argv) > 1 {
			n, err := strconv.Atoi(argv[1])
			if err != nil {
				return 2, true
			}
			code = n
		}
		return code, true
	case "echo":
		fmt.Fprint(sh.Stdout, strings.Join(argv[1:], " ")+nl)
	case "stderr":
		fmt.Fprint(sh.Stderr, strings.Join(argv[1:], " ")+nl)
	case "false":
		return 1, false
	case "cat":
		if sh.Stdin != nil {
			if _, err := io.Copy(sh.Stdout, sh.Stdin); err != nil {
				return 1, false
			}
		}
	case "sleep":
		d := sleepDuration(argv)
		select {
		case <-ctx.Done():
			return 130, false
		case <-time.After(d):
		}
	default:
		if isShell(argv[0]) && len(argv) == 3 && argv[1] == "-c" {
			return sh.Run(ctx, argv[2]), false
		}
	}
	return 0, false
}

// shellTokens splits script into words and operators. $? becomes the marker
// "\x00?" (expanded when the command runs) outside single quotes.
func shellTokens(script string) ([]shellToken, error) {
	var toks []shellToken
	var cur strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			toks = append(toks, shellToken{text: cur.String()})
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(script); i++ {
		c := script[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			flush()
		case c == ';' || c == '(' || c == ')':
			flush()
			toks = append(toks, shellToken{text: string(c), op: true})
		case c == '\'':
			j := strings.IndexByte(script[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated '")
			}
			cur.WriteString(script[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '"':
			j := strings.IndexByte(script[i+1:], '"')
			if j < 0 {
				return nil, fmt.Errorf("unterminated \"")
			}
			cur.WriteString(strings.ReplaceAll(script[i+1:i+1+j], "$?", "\x00?"))
			inWord = true
			i += j + 1
		case c == '$' && i+1 < len(script) && script[i+1] == '?':
			cur.WriteString("\x00?")
			inWord = true
			i++
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return toks, nil
}
