package sim

import (
	"context"
	"errors"
	"fmt"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// ExecRequest is one command for a simulated sandbox Pod. The simulated
// execd answers it from the simulation's state; nothing runs on the host.
type ExecRequest struct {
	Namespace, Pod string
	// UID, when set, must be the Pod's current UID (a same-name re-creation
	// is another Pod).
	UID string
	// Address, when set, routes by IP instead of by name: the request lands
	// in whichever live Pod holds the address now, exactly like a client
	// that dials a recorded IP, which a new Pod may hold by then.
	Address string
	// Execd: the request goes to execd (port 44772), which is not listening
	// in sandboxes created without an entrypoint.
	Execd   bool
	Command []string
	Stdout  io.Writer
	Stderr  io.Writer
}

// ExecError says why a simulated command could not start (it never ran).
type ExecError struct {
	Reason string
}

func (e *ExecError) Error() string { return e.Reason }

// execTarget is what a command needs to know about its Pod, copied under the lock.
type execTarget struct {
	ns, pod, uid, ip, node string
	id, tenant, image      string
	command                []string
	env                    []corev1.EnvVar
	now                    time.Time
}

// Exec runs req in the simulated sandbox and returns its exit code. An error
// means the command did not start (no such Pod, not running, execd not
// listening, nothing at the address).
func (s *Sim) Exec(ctx context.Context, req ExecRequest) (int, error) {
	t, err := s.execTarget(req)
	if err != nil {
		return 0, err
	}
	return runSimulated(ctx, t, req.Command, orDiscard(req.Stdout), orDiscard(req.Stderr)), nil
}

// ShellLine runs one line typed into a simulated interactive shell in req's
// Pod (req.Command is ignored), the way sh runs it: commands separated by
// ';', '&&' or newlines, "$?" is the status of the command before, and
// "exit [N]" ends the shell (a bare exit with that status). last is the
// status the previous line left. An error means the Pod can no longer be
// reached (gone, re-created under another UID, terminating, its container
// stopped): nothing of the line ran.
func (s *Sim) ShellLine(ctx context.Context, req ExecRequest, line string, last int) (code int, exited bool, err error) {
	t, err := s.execTarget(req)
	if err != nil {
		return last, false, err
	}
	code, exited = runScript(ctx, t, line, last, orDiscard(req.Stdout), orDiscard(req.Stderr))
	return code, exited, nil
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

func (s *Sim) execTarget(req ExecRequest) (execTarget, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var sb *sandbox
	var p *simPod
	if req.Address != "" {
		sb, p = s.livePodWithIP(req.Address)
		if p == nil {
			return execTarget{}, &ExecError{Reason: fmt.Sprintf("dial tcp %s:%d: connect: no route to host", req.Address, osv1.ExecdPort)}
		}
	} else {
		sb, p = s.podByName(req.Namespace, req.Pod)
		if p == nil {
			return execTarget{}, &ExecError{Reason: fmt.Sprintf("pods %q not found", req.Pod)}
		}
		if req.UID != "" && string(p.obj.UID) != req.UID {
			return execTarget{}, &ExecError{Reason: fmt.Sprintf("pod %s/%s has UID %s, not %s", req.Namespace, req.Pod, p.obj.UID, req.UID)}
		}
	}
	pod := p.obj
	if pod.DeletionTimestamp != nil {
		return execTarget{}, &ExecError{Reason: fmt.Sprintf("pod %s is terminating", pod.Name)}
	}
	if len(pod.Status.ContainerStatuses) == 0 || pod.Status.ContainerStatuses[0].State.Running == nil {
		return execTarget{}, &ExecError{Reason: fmt.Sprintf("container %s is not running in pod %s", osv1.ContainerSandbox, pod.Name)}
	}
	if req.Execd && sb != nil && sb.execdDown {
		return execTarget{}, &ExecError{Reason: fmt.Sprintf("dial tcp %s:%d: connect: connection refused (execd is not listening)", pod.Status.PodIP, osv1.ExecdPort)}
	}
	t := execTarget{
		ns: pod.Namespace, pod: pod.Name, uid: string(pod.UID), ip: pod.Status.PodIP, node: pod.Spec.NodeName,
		image: pod.Spec.Containers[0].Image, command: pod.Spec.Containers[0].Command,
		env: pod.Spec.Containers[0].Env, now: s.now,
	}
	if sb != nil {
		t.id, t.tenant = sb.id, sb.tenant
	}
	return t, nil
}

// podByName finds a simulated Pod (sandbox or pool Pod) by name.
func (s *Sim) podByName(ns, name string) (*sandbox, *simPod) {
	if sb := s.podOwner[key(ns, name)]; sb != nil {
		for _, p := range sb.pods {
			if p != nil && p.obj != nil && p.obj.Name == name {
				return sb, p
			}
		}
	}
	if pl := s.pools[ns]; pl != nil {
		for _, p := range pl.idle {
			if p.obj != nil && p.obj.Name == name {
				return nil, p
			}
		}
	}
	return nil, nil
}

// livePodWithIP finds the running Pod that holds ip now.
func (s *Sim) livePodWithIP(ip string) (*sandbox, *simPod) {
	keys := make([]string, 0, len(s.sandboxes))
	for k := range s.sandboxes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sb := s.sandboxes[k]
		for _, p := range sb.pods {
			if p != nil && p.obj != nil && p.obj.Status.PodIP == ip && isLive(p.obj) {
				return sb, p
			}
		}
	}
	for _, pl := range s.pools {
		for _, p := range pl.idle {
			if p.obj != nil && p.obj.Status.PodIP == ip && isLive(p.obj) {
				return nil, p
			}
		}
	}
	return nil, nil
}

func isLive(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

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

type scriptPart struct {
	cmd string
	and bool // runs only when the previous one succeeded
}

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

func (t execTarget) files() map[string]string {
	return map[string]string{
		"/workspace/pi.txt":    fmt.Sprintf("3.14159265358979 (computed in sandbox %s, pod %s)\n", t.id, t.pod),
		"/workspace/README.md": "Scratch space of a simulated sandscope demo sandbox. Nothing here runs on your machine.\n",
		"/etc/hostname":        t.pod + "\n",
		"/etc/os-release":      "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nID=debian\n",
	}
}

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

// IsExecError says whether err means the simulated command never started.
func IsExecError(err error) bool {
	var e *ExecError
	return errors.As(err, &e)
}
