package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/backend"
	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
)

type execFlags struct {
	via         string
	container   string
	stdin, tty  bool
	timeout     time.Duration
	token       string
	tokenSecret string
	execdPort   int
	syncTimeout time.Duration
	expectUID   string
	expectIP    string
	pool        string
	maxParallel int
	output      string
}

func newExecCommand(g *Globals) *cobra.Command {
	f := &execFlags{}
	cmd := &cobra.Command{
		Use:   "exec [-n NS] SANDBOX|pod/NAME [--via kube|execd|execd-direct] [-c CONTAINER] [-i] [-t] [--timeout D] -- CMD [ARGS...]",
		Short: "Run a command in a sandbox, after proving the target is still the Pod it means",
		Long: `exec reads the target Pod live from the API server immediately before sending anything and requires the
bound UID, phase Running, no deletion, the Pod's current IP and no other live Pod holding that IP, then checks
again after the command. The command runs in the main container ("sandbox" for OpenSandbox, else the first).
With -i -t and no command it opens a shell (bash, then sh).

With --demo it runs in the embedded simulated fleet: the simulation answers the command, and -i -t opens a
simulated shell; nothing runs on this machine.

Transports: kube (pods/exec via the API server), execd (the sandbox's exec daemon on port 44772 through a
port-forward), execd-direct (http://<podIP>:44772, from inside the cluster). execd's access token comes from
--execd-token, $SANDSCOPE_EXECD_TOKEN or --execd-token-secret NS/NAME:KEY and is never printed.

Exit codes: the command's own when it ran; 2 a usage error (code USAGE); 125 when sandscope refused or
failed before anything ran; 126 when the outcome is unknown (the request may have run: never retry it blindly). A refusal or failure
prints one JSON object on stderr: {"error":{"code","message","retryable","executed":"no|unknown|yes","evidence":[...]}}.`,
		ValidArgsFunction: g.completeSandbox,
		RunE: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			if dash < 0 {
				dash = len(args)
			}
			usage := func(format string, args ...any) error { return printExecError(g, usageRefusal(format, args...)) }
			fanOut := f.pool != "" || (dash == 0 && g.Selector != "")
			switch {
			case f.pool != "" && g.Selector != "":
				return usage("--all-of-pool and --selector each pick the targets: give one (the pool's sandboxes are not filtered by labels)")
			case fanOut && dash != 0:
				return usage("exec with --selector or --all-of-pool takes no target before --, got %d", dash)
			case fanOut:
				return runExecMany(cmd.Context(), g, f, args)
			case dash != 1:
				return usage("exec takes one target (SANDBOX or pod/NAME) before --, got %d (or --selector/--all-of-pool for many)", dash)
			case f.output != "":
				return usage("-o is for exec --selector/--all-of-pool only")
			}
			return runExec(cmd.Context(), g, f, args[0], args[dash:])
		},
	}
	// Every usage error, the root's checks (config file, --image-checks,
	// one context) included, is exec's JSON error object.
	jsonUsage(cmd, func(err error) error { return execUsage(g, err) }, func(_ *cobra.Command, args []string) error {
		if len(args) == 0 {
			return errors.New("exec wants a target (SANDBOX or pod/NAME, or --selector/--all-of-pool) and -- CMD")
		}
		return nil
	})
	fl := cmd.Flags()
	fl.BoolVarP(&f.stdin, "stdin", "i", false, "Pass stdin to the command (kube only)")
	fl.BoolVarP(&f.tty, "tty", "t", false, "Allocate a terminal (kube only)")
	addTargetFlags(cmd, g, f, targetFlagHelp{
		via:         "Transport: kube, execd or execd-direct",
		timeout:     "Give up waiting for the command after this long (outcome unknown, exit 126); 0 = no limit",
		expectUID:   "Refuse (UID_CHANGED) unless the sandbox's Pod still has this UID (as recorded at create: sandscope create -o json prints it)",
		allOfPool:   "Run on every BatchSandbox of this Pool, or every Sandbox of this agent-sandbox warm pool (its members and its claims' Sandboxes; with -o jsonl; no target)",
		maxParallel: "With --selector/--all-of-pool: targets run at once",
		output:      "With --selector/--all-of-pool: jsonl (one JSON line per sandbox, the default)",
	})
	return cmd
}

// targetFlagHelp is what the flags exec and cp share say in each
// command's help.
type targetFlagHelp struct{ via, timeout, expectUID, allOfPool, maxParallel, output string }

// addTargetFlags registers the flags exec and cp share: how the target is
// reached (transport, container, execd's token and port), what it must
// still be (UID, IP), the fan-out (pool, width, -o) and --demo's read.
func addTargetFlags(cmd *cobra.Command, g *Globals, f *execFlags, help targetFlagHelp) {
	fl := cmd.Flags()
	fl.StringVar(&f.via, "via", "kube", help.via)
	fl.StringVarP(&f.container, "container", "c", "", "Container (default: sandbox, else the first)")
	fl.DurationVar(&f.timeout, "timeout", 0, help.timeout)
	fl.StringVar(&f.token, "execd-token", "", "execd access token (prefer $SANDSCOPE_EXECD_TOKEN or --execd-token-secret)")
	fl.StringVar(&f.tokenSecret, "execd-token-secret", "", "Read execd's access token from a Secret: NS/NAME:KEY")
	fl.IntVar(&f.execdPort, "execd-port", 0, "execd's port (default 44772)")
	fl.DurationVar(&f.syncTimeout, "sync-timeout", 30*time.Second, "With --demo: time allowed to read the demo fleet before the check")
	fl.StringVar(&f.expectUID, "expect-uid", "", help.expectUID)
	fl.StringVar(&f.expectIP, "expect-ip", "", "Refuse (IP_STALE) unless the sandbox's Pod still has this IP")
	fl.StringVar(&f.pool, "all-of-pool", "", help.allOfPool)
	fl.IntVar(&f.maxParallel, "max-parallel", 8, help.maxParallel)
	fl.StringVarP(&f.output, "output", "o", "", help.output)
	_ = fl.MarkHidden("execd-port")
	_ = cmd.RegisterFlagCompletionFunc("all-of-pool", g.completePool)
}

func runExec(ctx context.Context, g *Globals, f *execFlags, ref string, command []string) error {
	quietClientGo()
	fail := func(err error) error { return printExecError(g, err) }
	usage := func(format string, args ...any) error { return fail(usageRefusal(format, args...)) }
	via, err := execute.ParseVia(f.via)
	if err != nil {
		return usage("%v", err)
	}
	shell := len(command) == 0
	if shell && !(f.stdin && f.tty) {
		return usage("no command given after -- (use -i -t without a command for a shell)")
	}
	if err := execute.CheckExpectIP(f.expectIP); err != nil {
		return fail(err) // before connecting: a usage error reads nothing
	}
	if g.ReadOnly {
		// Refused by the action itself, before any connection.
		_, err := execute.New(execute.Options{ReadOnly: true}).Run(ctx, execute.Request{Ref: ref, Command: []string{"-"}})
		return fail(err)
	}

	// With --demo the simulated fleet lives as long as this command; its
	// exec daemons and simulated shell answer, nothing runs on this machine.
	conn, token, err := connectForTargets(ctx, g, f, false)
	if err != nil {
		return fail(err)
	}
	defer conn.Close()
	x, namespace, err := conn.LookupExecutor(ctx, backend.ExecOptions{Token: token, Port: f.execdPort}, f.syncTimeout)
	if err != nil {
		return fail(unreachedRefusal(err))
	}

	if f.tty {
		if via != execute.ViaKube {
			return usage("--tty needs --via kube: execd has no terminal")
		}
		opts := execute.ShellOptions{Container: f.container, Command: command, ExpectUID: f.expectUID, ExpectIP: f.expectIP}
		sh := x.ShellRef(ctx, namespace, ref, opts)
		// The shell's terminal session is the operator's own: its bytes pass.
		stdout, stderr := g.rawStreams()
		sh.SetStdin(g.In)
		sh.SetStdout(stdout)
		sh.SetStderr(stderr)
		if err := sh.Run(); err != nil {
			return fail(err)
		}
		return exitWith(sh.Result().ExitCode)
	}

	// The command's output passes byte for byte, as kubectl exec's does:
	// it may be a file piped on. Only sandscope's own lines are text.
	stdout, stderr := g.rawStreams()
	req := execute.Request{Namespace: namespace, Ref: ref, Container: f.container, Via: via,
		Command: command, Stdout: stdout, Stderr: stderr, Timeout: f.timeout, ExpectUID: f.expectUID, ExpectIP: f.expectIP}
	if f.stdin {
		req.Stdin = g.In
	}
	res, err := x.Run(ctx, req)
	if err != nil {
		return fail(err)
	}
	return exitWith(res.ExitCode)
}

// runExecMany runs one command on every sandbox --selector or
// --all-of-pool picks, each identity-checked on its own, printing one JSON
// line per sandbox.
func runExecMany(ctx context.Context, g *Globals, f *execFlags, command []string) error {
	quietClientGo()
	fail := func(err error) error { return printExecError(g, err) }
	usage := func(format string, args ...any) error { return fail(usageRefusal(format, args...)) }
	switch {
	case f.output != "" && f.output != "jsonl":
		return usage("-o %s: exec over many sandboxes writes jsonl only", f.output)
	case len(command) == 0:
		return usage("no command given after --")
	case f.stdin || f.tty:
		return usage("-i/-t cannot be used when running on many sandboxes")
	case f.expectUID != "" || f.expectIP != "":
		return usage("--expect-uid/--expect-ip name one Pod: give one target instead")
	case f.maxParallel < 1:
		return usage("--max-parallel must be at least 1, got %d", f.maxParallel)
	}
	via, err := execute.ParseVia(f.via)
	if err != nil {
		return usage("%v", err)
	}
	if g.ReadOnly {
		_, err := execute.New(execute.Options{ReadOnly: true}).Run(ctx, execute.Request{Command: []string{"-"}})
		return fail(err)
	}
	conn, token, err := connectForTargets(ctx, g, f, true)
	if err != nil {
		return fail(err)
	}
	defer conn.Close()
	sel := fanOutSelection(g, f)
	x, keys, err := conn.ManyExecutor(ctx, backend.ExecOptions{Token: token, Port: f.execdPort}, sel, f.syncTimeout)
	if err != nil {
		return fail(unreachedRefusal(err))
	}
	if len(keys) == 0 {
		// A fan-out that ran nowhere is not a success: a mistyped pool or
		// selector would otherwise pass a script's check unseen.
		return fail(noTargets(sel))
	}
	var mu sync.Mutex
	tally := x.RunMany(ctx, keys, execute.Request{Via: via, Container: f.container, Command: command, Timeout: f.timeout}, f.maxParallel,
		func(l execute.Line) {
			mu.Lock()
			defer mu.Unlock()
			_ = textsafe.WriteJSON(g.Out, l, "") // a broken stdout shows in the exit code of the pipeline's reader
		})
	switch {
	case tally.Unknown > 0:
		return exitWith(execExitUnknown)
	case tally.NotRun > 0:
		return exitWith(execExitRefused)
	}
	return nil
}

// noTargets is the refusal of a fan-out whose selection matched no
// sandbox: NOT_FOUND, naming what was looked for and where.
func noTargets(sel kube.SelectOptions) error {
	where := "in namespace " + sel.Namespace
	if sel.Namespace == "" {
		where = "in any namespace"
	}
	if sel.Pool != "" {
		return refusal.New(refusal.CodeNotFound, fmt.Sprintf("no sandbox of pool %q %s: nothing ran", sel.Pool, where), false,
			model.Evidence{Kind: model.Observed, Text: fmt.Sprintf("listed no BatchSandbox of a Pool %q and no member or claimed Sandbox of a warm pool %q %s", sel.Pool, sel.Pool, where)})
	}
	return refusal.New(refusal.CodeNotFound, fmt.Sprintf("no sandbox matches --selector %q %s: nothing ran", sel.Selector, where), false,
		model.Evidence{Kind: model.Observed, Text: fmt.Sprintf("listed no sandbox matching %q %s", sel.Selector, where)})
}

// Exit codes of `sandscope exec` besides the command's own (README).
const (
	execExitRefused = 125 // refused, or failed before anything ran
	execExitUnknown = 126 // the outcome is unknown: the command may have run
)

// printExecError writes a refusal or failure as the one JSON line programs
// read on stderr, preceded on a terminal by one line for a person.
func printExecError(g *Globals, err error) error {
	var r *refusal.Error
	if !errors.As(err, &r) {
		// execute returns refusal.Errors only; anything else is read strictly.
		r = &refusal.Error{Code: execute.CodeTransport, Message: err.Error(), Executed: refusal.ExecutedUnknown, Err: err}
	}
	w := g.Err
	if _, stderr := g.rawStreams(); isTerminal(stderr) {
		fmt.Fprintf(w, "%s: %s\n", g.program(), textsafe.Line(r.Error()))
	}
	fmt.Fprintf(w, "%s\n", r.JSON())
	code := execExitUnknown
	switch {
	case r.Code == refusal.CodeUsage && r.Executed == refusal.ExecutedNo:
		// A request sandscope could not read is a usage error, as in every
		// other command: 125 is for a target it refused.
		code = ExitUsage
	case r.Executed == refusal.ExecutedNo:
		code = execExitRefused
	}
	return &ExitError{Code: code, Err: r, Silent: true}
}

// execUsage prints a usage error met before exec's own checks (cobra's
// flag and argument errors, the root's pre-run checks) as exec's JSON error
// object with code USAGE, as its other usage errors are: a program reading
// stderr meets one shape. A usage ExitError already printed, any other
// error, and nil pass unchanged.
func execUsage(g *Globals, err error) error {
	return usageAs(func(err error) error { return printExecError(g, err) }, err)
}

// usageAs is execUsage for a command whose errors print (and map to exit
// codes) through print: exec's and cp's.
func usageAs(print func(error) error, err error) error {
	var ee *ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee) && (ee.Silent || ee.Code != ExitUsage || ee.Err == nil):
		return err
	case ee != nil:
		err = ee.Err
	}
	return print(usageRefusal("%v", err))
}

// jsonUsage makes cmd's cobra-level usage errors (a bad flag, the wrong
// number of arguments, the root's pre-run checks) come out through usage
// as its other usage errors do, with args checking the arguments.
func jsonUsage(cmd *cobra.Command, usage func(error) error, args cobra.PositionalArgs) {
	cmd.Args = func(c *cobra.Command, a []string) error {
		if err := args(c, a); err != nil {
			return usage(seeHelp(c, err))
		}
		return nil
	}
	cmd.PersistentPreRunE = func(c *cobra.Command, a []string) error {
		if pre := c.Root().PersistentPreRunE; pre != nil {
			return usage(pre(c, a))
		}
		return nil
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usage(seeHelp(c, err)) })
}

// connectFailure: a cluster that cannot be reached now is worth a retry; a
// configuration that names no cluster (no kubeconfig, no such context) is not.
func connectFailure(err error) error {
	var ce *kube.ConnectError
	if errors.As(err, &ce) && ce.Local {
		return &refusal.Error{Code: execute.CodeConfig, Executed: refusal.ExecutedNo, Message: err.Error(), Err: err}
	}
	return unreachedRefusal(err)
}

// unreachedRefusal is err from reaching the cluster or the targets (a
// lookup, a list) before anything was sent: a refusal worth a retry.
func unreachedRefusal(err error) error {
	return &refusal.Error{Code: execute.CodeTransport, Executed: refusal.ExecutedNo, Retryable: true, Message: err.Error(), Err: err}
}

// usageRefusal is a request exec or cp cannot carry out as given: the
// refusal their error printers turn into exit 2 with code USAGE.
func usageRefusal(format string, args ...any) error {
	return refusal.New(refusal.CodeUsage, fmt.Sprintf(format, args...), false)
}

// quietClientGo drops the lines client-go writes through klog (a broken
// stream, a watch's trouble): exec's and cp's stderr carries exactly one
// JSON object on failure, and the TUI's screen would be scribbled over.
func quietClientGo() {
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
}

func exitWith(code int) error {
	if code == 0 {
		return nil
	}
	return &ExitError{Code: code, Silent: true}
}

// fanOutSelection is the sandboxes a fan-out of exec or cp runs on: the
// members of --all-of-pool, else those --selector matches; in -n's
// namespace, or with -A in every one (without -n it is "" already: every
// namespace, the demo's fleet spanning several).
func fanOutSelection(g *Globals, f *execFlags) kube.SelectOptions {
	namespace := g.Kube.Namespace()
	if g.AllNamespaces {
		namespace = ""
	}
	sel := kube.SelectOptions{Namespace: namespace, Pool: f.pool}
	if f.pool == "" {
		sel.Selector = g.Selector
	}
	return sel
}

// connectForTargets connects for exec and cp (under --demo: starts the
// simulated fleet) and reads execd's access token there. A fan-out
// (--selector or --all-of-pool) connects without the Pod selector: there
// --selector picks the sandboxes, not which Pods are sandboxes. Every error
// is a refusal, nothing having been sent; the caller closes the connection.
func connectForTargets(ctx context.Context, g *Globals, f *execFlags, fanOut bool) (*backend.Conn, string, error) {
	o, err := g.envOptions()
	if err != nil {
		return nil, "", &refusal.Error{Code: refusal.CodeUsage, Executed: refusal.ExecutedNo, Message: err.Error(), Err: err}
	}
	if fanOut {
		o.PodSelector = ""
	}
	conn, err := backend.New(o).Context("").Connect(ctx)
	if err != nil {
		return nil, "", connectFailure(err)
	}
	token, err := execdTokenFrom(ctx, conn, f)
	if err != nil {
		conn.Close()
		return nil, "", err
	}
	return conn, token, nil
}

// execdTokenFrom picks execd's token: the flag, else the environment, else
// the Secret. The value is never printed; errors name only where it came
// from, and refuse (nothing was sent). The demo's simulated daemons ask
// for none.
func execdTokenFrom(ctx context.Context, c *backend.Conn, f *execFlags) (string, error) {
	token, err := execdToken(ctx, c, f)
	if err != nil {
		return "", &refusal.Error{Code: execute.CodeTransport, Executed: refusal.ExecutedNo, Message: err.Error(), Err: err}
	}
	return token, nil
}

func execdToken(ctx context.Context, c *backend.Conn, f *execFlags) (string, error) {
	if !c.NeedsToken() {
		return "", nil
	}
	if f.token != "" {
		return f.token, nil
	}
	if v := os.Getenv("SANDSCOPE_EXECD_TOKEN"); v != "" {
		return v, nil
	}
	if f.tokenSecret == "" {
		return "", nil
	}
	ref, key, ok := strings.Cut(f.tokenSecret, ":")
	ns, name, ok2 := strings.Cut(ref, "/")
	if !ok || !ok2 || ns == "" || name == "" || key == "" {
		return "", fmt.Errorf("--execd-token-secret wants NS/NAME:KEY, got %q", f.tokenSecret)
	}
	return c.Clients.SecretValue(ctx, ns, name, key)
}
