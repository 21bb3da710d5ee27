package sim

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The simulated sandbox's shell: a few commands, interpreted against the
// Pod's simulated state and file system. Nothing runs on the host.

// runSimulated interprets a small set of commands against the sandbox's
// simulated file system. "sh -c SCRIPT" runs SCRIPT's commands separated by
// ';' or '&&'.
func runSimulated(ctx context.Context, t execTarget, argv []string, stdout, stderr io.Writer) int {
	if len(argv) >= 3 && IsShell(argv[0]) && argv[1] == "-c" {
		code, _ := runScript(ctx, t, argv[2], 0, stdout, stderr)
		return code
	}
	if len(argv) == 0 {
		fmt.Fprintln(stderr, "no command")
		return 127
	}
	return runOne(ctx, t, argv, stdout, stderr)
}

// IsShell says whether name is a shell the simulated sandboxes have.
func IsShell(name string) bool {
	switch name {
	case "sh", "bash", "/bin/sh", "/bin/bash":
		return true
	}
	return false
}

// runScript runs a shell script's commands; last is "$?" before the first.
// exited reports an "exit", which ends the script (and an interactive shell).
func runScript(ctx context.Context, t execTarget, script string, last int, stdout, stderr io.Writer) (code int, exited bool) {
	code = last
	for _, part := range splitScript(script) {
		words := splitWords(part.cmd)
		if len(words) == 0 {
			continue
		}
		if part.and && code != 0 {
			continue
		}
		for i, w := range words {
			words[i] = strings.ReplaceAll(w, "$?", strconv.Itoa(code))
		}
		if words[0] == "exit" {
			if len(words) > 1 {
				n, err := strconv.Atoi(words[1])
				if err != nil {
					fmt.Fprintf(stderr, "sh: 1: exit: Illegal number: %s\n", words[1])
					return 2, true
				}
				code = n & 0xff
			}
			return code, true
		}
		code = runOne(ctx, t, words, stdout, stderr)
	}
	return code, false
}

// scriptPart is one command of a script.
type scriptPart struct {
	cmd string
	and bool // runs only when the previous one succeeded
}

// splitScript splits a script at ';', '&&' and newlines.
func splitScript(script string) []scriptPart {
	var parts []scriptPart
	and := false
	for len(script) > 0 {
		i := strings.IndexAny(script, ";&\n")
		if i < 0 {
			parts = append(parts, scriptPart{script, and})
			break
		}
		parts = append(parts, scriptPart{script[:i], and})
		and = strings.HasPrefix(script[i:], "&&")
		if and {
			script = script[i+2:]
		} else {
			script = script[i+1:]
		}
	}
	return parts
}

// splitWords splits on blanks, honouring single and double quotes.
func splitWords(s string) []string {
	var words []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// files is the simulated file system of the target's Pod.
func (t execTarget) files() map[string]string {
	return map[string]string{
		"/workspace/pi.txt":    fmt.Sprintf("3.14159265358979 (computed in sandbox %s, pod %s)\n", t.id, t.pod),
		"/workspace/README.md": "Scratch space of a simulated sandscope demo sandbox. Nothing here runs on your machine.\n",
		"/etc/hostname":        t.pod + "\n",
		"/etc/os-release":      "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nID=debian\n",
	}
}

// runOne runs one simulated command and returns its exit code.
func runOne(ctx context.Context, t execTarget, argv []string, stdout, stderr io.Writer) int {
	files := t.files()
	switch argv[0] {
	case "hostname":
		fmt.Fprintln(stdout, t.pod)
	case "whoami":
		fmt.Fprintln(stdout, "root")
	case "id":
		fmt.Fprintln(stdout, "uid=0(root) gid=0(root) groups=0(root)")
	case "pwd":
		fmt.Fprintln(stdout, "/workspace")
	case "true", ":":
	case "false":
		return 1
	case "cd":
		// One directory, and the prompt always shows it.
		if len(argv) > 1 && argv[1] != "/workspace" && argv[1] != "." {
			fmt.Fprintf(stderr, "sh: 1: cd: can't cd to %s (the demo sandbox has one directory, /workspace)\n", argv[1])
			return 2
		}
	case "exit":
		if len(argv) > 1 {
			n, _ := strconv.Atoi(argv[1])
			return n
		}
	case "echo":
		fmt.Fprintln(stdout, strings.Join(argv[1:], " "))
	case "date":
		fmt.Fprintln(stdout, t.now.UTC().Format("Mon Jan _2 15:04:05 UTC 2006"))
	case "uname":
		if len(argv) > 1 && argv[1] == "-a" {
			fmt.Fprintf(stdout, "Linux %s 6.8.0-sandscope-demo #1 SMP PREEMPT_DYNAMIC x86_64 GNU/Linux\n", t.pod)
		} else {
			fmt.Fprintln(stdout, "Linux")
		}
	case "env", "printenv":
		fmt.Fprintf(stdout, "HOSTNAME=%s\nHOME=/root\nPATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n", t.pod)
		for _, e := range t.env {
			fmt.Fprintf(stdout, "%s=%s\n", e.Name, e.Value)
		}
	case "ls":
		dir := "/workspace"
		if len(argv) > 1 && !strings.HasPrefix(argv[len(argv)-1], "-") {
			dir = strings.TrimSuffix(argv[len(argv)-1], "/")
		}
		var names []string
		for path := range files {
			if strings.HasPrefix(path, dir+"/") {
				names = append(names, strings.TrimPrefix(path, dir+"/"))
			}
		}
		if len(names) == 0 && dir != "/workspace" {
			fmt.Fprintf(stderr, "ls: cannot access '%s': No such file or directory\n", dir)
			return 2
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintln(stdout, n)
		}
	case "cat":
		code := 0
		for _, f := range argv[1:] {
			path := f
			if !strings.HasPrefix(path, "/") {
				path = "/workspace/" + path
			}
			content, ok := files[path]
			if !ok {
				fmt.Fprintf(stderr, "cat: %s: No such file or directory\n", f)
				code = 1
				continue
			}
			fmt.Fprint(stdout, content)
		}
		return code
	case "ps":
		fmt.Fprintln(stdout, "  PID TTY          TIME CMD")
		fmt.Fprintf(stdout, "    1 ?        00:00:00 %s\n", strings.Join(t.command, " "))
		fmt.Fprintln(stdout, "    7 ?        00:00:02 execd --port 44772")
	case "python3", "python":
		if len(argv) > 1 && (argv[1] == "--version" || argv[1] == "-V") {
			fmt.Fprintln(stdout, "Python 3.12.7")
			return 0
		}
		fmt.Fprintln(stderr, "python3: the demo sandbox only answers --version")
		return 2
	case "sleep":
		d := time.Second
		if len(argv) > 1 {
			if f, err := strconv.ParseFloat(argv[1], 64); err == nil {
				d = time.Duration(f * float64(time.Second))
			}
		}
		if d > 30*time.Second {
			d = 30 * time.Second
		}
		select {
		case <-ctx.Done():
			return 137
		case <-time.After(d):
		}
	default:
		fmt.Fprintf(stderr, "sh: 1: %s: not found (the demo sandbox knows: hostname, id, whoami, pwd, ls, cat, echo, env, date, uname, ps, sleep, true, false, exit, python3 --version)\n", argv[0])
		return 127
	}
	return 0
}
