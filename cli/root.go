// Package cli holds sandscope's commands: the TUI (no subcommand) and the
// subcommands for cron, CI and scripts. It parses flags and wires packages
// together; the work itself lives in ui/, actions/, kube/ and model/.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/sandscope/sandscope/backend"
	"github.com/sandscope/sandscope/demo"
	"github.com/sandscope/sandscope/internal/crash"
	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/imageconfig"
)

// Exit codes shared by every command unless the command documents its own.
const (
	ExitOK       = 0
	ExitFailure  = 1
	ExitUsage    = 2
	ExitInternal = crash.ExitCode // a panic, on any goroutine (internal/crash exits with it too)
)

// ExitError ends the process with Code. When Silent, the command has already
// printed everything (for example a JSON error object) and main prints nothing.
type ExitError struct {
	Code   int
	Err    error
	Silent bool
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Globals are the flags every command shares, and the streams it writes to.
type Globals struct {
	Kube          *kube.ConfigFlags
	AllNamespaces bool
	AllContexts   bool // the TUI over every context of the kubeconfig
	ReadOnly      bool
	Demo          bool
	Selector      string        // extra label selector for plain-Pod sandboxes
	StuckAfter    time.Duration // a deleting Pod is stuck after grace + this
	Shell         string        // shell for the TUI's `s` ("" = bash, then sh)
	Favorites     []string      // namespaces of the TUI's 1-9 (config file)
	// ImageChecks and ImageRegistries govern the background image-config
	// reads (imagechecks.go); ConfigFile overrides the config file's path.
	ImageChecks     string
	ImageRegistries []string
	ConfigFile      string
	// Program is the name the user ran: "sandscope", or "kubectl sandscope"
	// as kubectl's plugin (plugin.go); usage, help and examples use it.
	Program string

	In io.Reader
	// Out and Err carry every command's text. MainAs makes them
	// textsafe.Writers: what the fleet wrote into a line is shown, never
	// obeyed, whether or not the code that printed it cleaned it first.
	Out, Err io.Writer
	// raw are the process's own streams under Out and Err, for the bytes
	// that must pass unchanged: what a command run in a sandbox prints
	// (exec, as kubectl exec) and a line that steers the terminal on purpose.
	raw struct{ out, err io.Writer }
}

// rawStreams are the streams under Out and Err; Out and Err themselves
// when g was built without them (tests that build Globals by hand).
func (g *Globals) rawStreams() (out, errOut io.Writer) {
	out, errOut = g.raw.out, g.raw.err
	if out == nil {
		out = g.Out
	}
	if errOut == nil {
		errOut = g.Err
	}
	return out, errOut
}

// NewRootCommand builds the sandscope command tree.
func NewRootCommand(g *Globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "sandscope",
		Short: "Inspect and act on Kubernetes sandbox fleets safely",
		Long: `sandscope shows every sandbox of a fleet (OpenSandbox BatchSandbox, agent-sandbox Sandbox, labelled Pods)
with its phase, notices and identity state, and runs identity-checked exec, fail-fast creates and sweeps.
Without a subcommand it opens the terminal UI.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version(),
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTUI(cmd.Context(), g)
		},
	}
	setDisplayName(root, g.Program)
	root.SetIn(g.In)
	root.SetOut(g.Out)
	root.SetErr(g.Err)
	pf := root.PersistentFlags()
	g.Kube.AddFlags(pf)
	pf.BoolVarP(&g.AllNamespaces, "all-namespaces", "A", false, "Look at sandboxes in every namespace")
	pf.BoolVar(&g.ReadOnly, "readonly", false, "Refuse every mutating action (exec, shell, create, delete, entrypoints set/rm, cp uploads)")
	pf.BoolVar(&g.Demo, "demo", false, "Run on the embedded simulated fleet instead of a cluster")
	pf.StringVar(&g.Selector, "selector", "", "Label selector for plain-Pod sandboxes (default: pods labelled opensandbox.io/id)")
	pf.DurationVar(&g.StuckAfter, "stuck-after", 5*time.Minute, "A deleting Pod is stuck Terminating after its grace period plus this")
	pf.StringVar(&g.ImageChecks, "image-checks", imageChecksOn, "Background image-config reads for ENTRYPOINT_NOT_RUN: on, off, or anonymous (no registry credentials; implied by --readonly)")
	pf.StringSliceVar(&g.ImageRegistries, "image-registries", nil, "Registry hosts the background image checks may contact (comma-separated; default: any)")
	pf.StringVar(&g.ConfigFile, "config", "", "Config file (default $XDG_CONFIG_HOME/sandscope/config.yaml)")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if err := applyConfigFile(cmd, g); err != nil {
			return &ExitError{Code: ExitUsage, Err: err}
		}
		if _, err := g.imageCheckMode(); err != nil {
			return &ExitError{Code: ExitUsage, Err: err}
		}
		return oneContextOnly(cmd, g)
	}
	root.Flags().StringVar(&g.Shell, "shell", "", "Shell the TUI's shell key opens (default: bash, falling back to sh)")
	root.Flags().BoolVar(&g.AllContexts, "all-contexts", false, "Show every context of the kubeconfig in one table (--context a,b: those)")
	// Every command's flag errors point at its help; create and
	// entrypoints set their own (their usage exit code is 3) through
	// seeHelp too.
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return seeHelp(cmd, err) })
	root.AddCommand(subcommands(g)...)
	strictCompletion(root)
	addGlobalCompletions(root, g)
	return root
}

// seeHelp ends a usage error with where to read the command's usage.
func seeHelp(cmd *cobra.Command, err error) error {
	return fmt.Errorf("%w; see %s --help", err, cmd.CommandPath())
}

// subcommandsOnly is the run of a command that only groups subcommands:
// alone it prints its help; given a word no subcommand answers to, it is a
// usage error with code, where cobra prints the help and exits 0 (so a
// script's typo, `explain restrat`, passes silently).
func subcommandsOnly(code int) (cobra.PositionalArgs, func(*cobra.Command, []string) error) {
	return cobra.ArbitraryArgs, func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return &ExitError{Code: code, Err: seeHelp(cmd, fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath()))}
		}
		return cmd.Help()
	}
}

// strictCompletion makes `completion SHELL` refuse a shell it has no
// script for: cobra's own command prints its help for any argument and
// exits 0, so `source <(sandscope completion bsah)` fails silently.
func strictCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	cmd, _, err := root.Find([]string{"completion"})
	if err != nil || cmd == root {
		return
	}
	var shells []string
	for _, c := range cmd.Commands() {
		shells = append(shells, c.Name())
	}
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		return &ExitError{Code: ExitUsage, Err: seeHelp(cmd, fmt.Errorf("no completion for shell %q: want %s", args[0], strings.Join(shells, ", ")))}
	}
}

// Main runs sandscope with args and returns the process exit code, as
// MainAs does for a binary named sandscope.
func Main(args []string, in io.Reader, out, errOut io.Writer) int {
	return MainAs("sandscope", args, in, out, errOut)
}

// MainAs runs the binary started as argv0 (os.Args[0]: sandscope, or
// kubectl-sandscope as kubectl's plugin) with args and returns the process
// exit code. Nothing
// below it may panic into the user's terminal: a panic, on this goroutine or
// any other (internal/crash), gives the terminal back, then prints its value
// and stack on stderr, and the exit code is 70.
func MainAs(argv0 string, args []string, in io.Reader, out, errOut io.Writer) (code int) {
	// Every command's text goes through textsafe on its way out, so that no
	// printing code can forget to (Globals.Out, Globals.Err).
	textOut, textErr := textsafe.NewWriter(out), textsafe.NewWriter(errOut)
	defer func() {
		_ = textOut.Flush()
		_ = textErr.Flush()
	}()
	defer crash.Install(textErr, os.Exit)()
	defer func() {
		if r := recover(); r != nil {
			crash.Restore()
			fmt.Fprintf(textErr, "sandscope: internal error: %s\n\n%s", textsafe.Line(fmt.Sprint(r)), debug.Stack())
			code = ExitInternal
		}
	}()
	// Every signal that ends sandscope ends it through the context, so the
	// terminal UI gives the terminal back (main screen, mouse off) on its
	// way out: a hung-up terminal (SIGHUP) too. SIGQUIT keeps its meaning.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	defer giveBackOnQuit()()
	program, args := invocation(argv0, args)
	g := &Globals{Kube: kube.NewConfigFlags(), Program: program, In: in, Out: textOut, Err: textErr}
	g.raw.out, g.raw.err = out, errOut
	root := NewRootCommand(g)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if !ee.Silent && ee.Err != nil {
			fmt.Fprintf(textErr, "%s: %s\n", program, textsafe.Line(ee.Err.Error()))
		}
		return ee.Code
	}
	// Errors quote what the cluster or a registry said: shown, not obeyed.
	fmt.Fprintf(textErr, "%s: %s\n", program, textsafe.Line(err.Error()))
	var ce *kube.ConnectError
	if errors.As(err, &ce) {
		return ExitFailure
	}
	return ExitUsage
}

// Version is sandscope's version as the Go toolchain recorded it in the
// binary: the module version of a `go install …@version`, else the VCS
// revision of a build from a checkout (with "+dirty" for local changes).
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return "devel"
	}
	return "devel-" + rev[:min(len(rev), 12)] + dirty
}

// env is where the command's fleet lives, as the global flags say: the
// kubeconfig's clusters, or with --demo the simulated fleet.
func (g *Globals) env() (*backend.Env, error) {
	o, err := g.envOptions()
	if err != nil {
		return nil, err
	}
	return backend.New(o), nil
}

func (g *Globals) envOptions() (backend.Options, error) {
	checks, err := g.imageChecks(imageconfig.Options{})
	if err != nil {
		return backend.Options{}, &ExitError{Code: ExitUsage, Err: err}
	}
	o := backend.Options{Kube: g.Kube, AllNamespaces: g.AllNamespaces, PodSelector: g.Selector, StuckAfter: g.StuckAfter,
		ReadOnly: g.ReadOnly, ImageChecks: checks}
	if g.Demo {
		o.Demo = &demo.Options{}
	}
	return o, nil
}

// connect reaches the context the flags name: the cluster's API server, or
// with --demo a simulated fleet started now, which Close ends.
func (g *Globals) connect(ctx context.Context) (*backend.Conn, error) {
	e, err := g.env()
	if err != nil {
		return nil, err
	}
	return e.Context("").Connect(ctx)
}

// giveBackOnQuit keeps what SIGQUIT means to a Go program (every
// goroutine's stack on stderr, exit 2) but gives the terminal back first:
// the runtime's own handler would print the stacks onto the alternate
// screen and leave the mouse on. The returned func stops listening.
func giveBackOnQuit() (stop func()) {
	quit := make(chan os.Signal, 1)
	signal.Notify(quit, syscall.SIGQUIT)
	done := make(chan struct{})
	crash.Go(func() {
		select {
		case <-quit:
			crash.Restore()
			signal.Reset(syscall.SIGQUIT)
			if self, err := os.FindProcess(os.Getpid()); err == nil {
				_ = self.Signal(syscall.SIGQUIT) // the runtime's handler now: the stacks, exit 2
			}
		case <-done:
		}
	})
	return func() {
		signal.Stop(quit)
		close(done)
	}
}
