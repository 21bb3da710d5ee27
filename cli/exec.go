package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/demo"
	"github.com/sandscope/sandscope/kube"
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
}

func newExecCommand(g *Globals) *cobra.Command {
	f := &execFlags{}
	cmd := &cobra.Command{
		Use:   "exec [-n NS] SANDBOX|pod/NAME [--via kube|execd|execd-direct] [-c CONTAINER] [-i] [-t] [--timeout D] -- CMD [ARGS...]",
		Short: "Run a command in a sandbox, after proving the target is still the Pod it means",
		Long: "exec reads the target Pod live from the API server immediately before sending anything and requires the\n" +
			"bound UID, phase Running, no deletion, the Pod's current IP and no other live Pod holding that IP, then checks\n" +
			"again after the command. The command runs in the main container (\"sandbox\" for OpenSandbox, else the first).\n" +
			"With -i -t and no command it opens a shell (bash, then sh).\n\n" +
			"With --demo it runs in the embedded simulated fleet: the simulation answers the command, and -i -t opens a\n" +
			"simulated shell; nothing runs on this machine.\n\n" +
			"Transports: kube (pods/exec via the API server), execd (the sandbox's exec daemon on port 44772 through a\n" +
			"port-forward), execd-direct (http://<podIP>:44772, from inside the cluster). execd's access token comes from\n" +
			"--execd-token, $SANDSCOPE_EXECD_TOKEN or --execd-token-secret NS/NAME:KEY and is never printed.\n\n" +
			"Exit codes: the command's own when it ran; 125 when sandscope refused or failed before anything ran;\n" +
			"126 when the outcome is unknown (the request may have run: never retry it blindly). A refusal or failure\n" +
			"prints one JSON object on stderr: {\"error\":{\"code\",\"message\",\"retryable\",\"executed\":\"no|unknown|yes\",\"evidence\":[...]}}.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			if dash < 0 {
				dash = len(args)
			}
			if dash != 1 {
				return &ExitError{Code: ExitUsage, Err: fmt.Errorf("exec takes one target (SANDBOX or pod/NAME) before --, got %d", dash)}
			}
			return runExec(cmd.Context(), g, f, args[0], args[dash:])
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.via, "via", "kube", "Transport: kube, execd or execd-direct")
	fl.StringVarP(&f.container, "container", "c", "", "Container (default: sandbox, else the first)")
	fl.BoolVarP(&f.stdin, "stdin", "i", false, "Pass stdin to the command (kube only)")
	fl.BoolVarP(&f.tty, "tty", "t", false, "Allocate a terminal (kube only)")
	fl.DurationVar(&f.timeout, "timeout", 0, "Give up waiting for the command after this long (outcome unknown, exit 126); 0 = no limit")
	fl.StringVar(&f.token, "execd-token", "", "execd access token (prefer $SANDSCOPE_EXECD_TOKEN or --execd-token-secret)")
	fl.StringVar(&f.tokenSecret, "execd-token-secret", "", "Read execd's access token from a Secret: NS/NAME:KEY")
	fl.IntVar(&f.execdPort, "execd-port", 0, "execd's port (default 44772)")
	fl.DurationVar(&f.syncTimeout, "sync-timeout", 30*time.Second, "Time allowed to read the namespace's fleet before the check")
	_ = fl.MarkHidden("execd-port")
	return cmd
}

func runExec(ctx context.Context, g *Globals, f *execFlags, ref string, command []string) error {
	// client-go reports broken streams through klog; stderr carries exactly
	// one JSON object on failure, so those lines are dropped here.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)

	fail := func(e *execute.Error) error {
		fmt.Fprintf(g.Err, "%s\n", e.JSON())
		return &ExitError{Code: e.ExitCode(), Err: e, Silent: true}
	}
	usage := func(format string, args ...any) error {
		return fail(&execute.Error{Code: execute.CodeUsage, Executed: execute.ExecutedNo, Message: fmt.Sprintf(format, args...)})
	}
	via, err := execute.ParseVia(f.via)
	if err != nil {
		return usage("%v", err)
	}
	shell := len(command) == 0
	if shell && !(f.stdin && f.tty) {
		return usage("no command given after -- (use -i -t without a command for a shell)")
	}
	if g.ReadOnly {
		// Refused by the action itself, before any connection.
		_, err := execute.New(execute.Options{ReadOnly: true}).Run(ctx, execute.Request{Ref: ref, Command: []string{"-"}})
		return fail(execute.AsError(err))
	}

	var clients *kube.Clients
	var transports map[execute.Via]execute.Transport
	wopts := kube.WatcherOptions{PodSelector: g.Selector, StuckAfter: g.StuckAfter}
	if g.Demo {
		// The simulated fleet lives as long as this command; its exec daemons
		// and simulated shell answer, nothing runs on this machine.
		dctx, stopDemo := context.WithCancel(ctx)
		d, err := demo.Start(dctx, demo.Options{})
		if err != nil {
			stopDemo()
			return fail(&execute.Error{Code: execute.CodeTransport, Executed: execute.ExecutedNo,
				Message: "starting the demo fleet: " + err.Error(), Err: err})
		}
		defer func() { stopDemo(); <-d.Done() }()
		clients, transports, wopts = d.Clients, d.Transports(), d.WatcherOptions(wopts)
		if ns := g.Kube.Namespace(); ns != "" {
			clients.Namespace = ns
		}
	} else {
		var err error
		clients, err = g.Connect(ctx)
		if err != nil {
			return fail(&execute.Error{Code: execute.CodeTransport, Executed: execute.ExecutedNo, Retryable: true,
				Message: err.Error(), Err: err})
		}
		token, err := execdTokenFrom(ctx, clients, f)
		if err != nil {
			return fail(&execute.Error{Code: execute.CodeTransport, Executed: execute.ExecutedNo, Message: err.Error(), Err: err})
		}
		transports = execute.DefaultTransports(clients, token, f.execdPort)
	}

	// The fleet of the target's namespace: resolves SANDBOX to its Pod and
	// gives the bound UID, the recorded address and the IP index.
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	wopts.Namespace = clients.Namespace
	w := kube.NewWatcher(clients, wopts)
	go func() { _ = w.Run(wctx) }()
	sctx, cancel := context.WithTimeout(ctx, f.syncTimeout)
	err = w.WaitForSync(sctx)
	cancel()
	if err != nil {
		return fail(&execute.Error{Code: execute.CodeTransport, Executed: execute.ExecutedNo, Retryable: true,
			Message: "reading the fleet of namespace " + clients.Namespace + ": " + err.Error(), Err: err})
	}

	x := execute.New(execute.Options{Cluster: clients, Snapshot: w.Fleet().Snapshot, Transports: transports})

	if f.tty {
		if via != execute.ViaKube {
			return usage("--tty needs --via kube: execd has no terminal")
		}
		opts := execute.ShellOptions{Container: f.container, Command: command}
		sh := x.ShellRef(ctx, clients.Namespace, ref, opts)
		sh.SetStdin(g.In)
		sh.SetStdout(g.Out)
		sh.SetStderr(g.Err)
		if err := sh.Run(); err != nil {
			return fail(execute.AsError(err))
		}
		return exitWith(sh.Result().ExitCode)
	}

	req := execute.Request{Namespace: clients.Namespace, Ref: ref, Container: f.container, Via: via,
		Command: command, Stdout: g.Out, Stderr: g.Err, Timeout: f.timeout}
	if f.stdin {
		req.Stdin = g.In
	}
	res, err := x.Run(ctx, req)
	if err != nil {
		return fail(execute.AsError(err))
	}
	return exitWith(res.ExitCode)
}

func exitWith(code int) error {
	if code == 0 {
		return nil
	}
	return &ExitError{Code: code, Silent: true}
}

// execdTokenFrom picks execd's token: the flag, else the environment, else
// the Secret. The value is never printed; errors name only where it came from.
func execdTokenFrom(ctx context.Context, c *kube.Clients, f *execFlags) (string, error) {
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
	return c.SecretValue(ctx, ns, name, key)
}
