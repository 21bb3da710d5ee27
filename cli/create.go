package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sandscope/sandscope/actions/create"
	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/backend"
	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/imageconfig"
)

type createFlags struct {
	image        string
	entrypoint   []string
	pool         string
	warmPool     string
	template     string
	env          []string
	lifetime     time.Duration
	waitTimeout  time.Duration
	cpu, memory  string
	wait         bool
	keepAlive    bool
	keepFailed   bool
	platform     string
	output       string
	engine       string
	execdImage   string
	table        string
	registryWait time.Duration
	execdWait    time.Duration
}

func newCreateCommand(g *Globals) *cobra.Command {
	f := &createFlags{}
	cmd := &cobra.Command{
		Use:   "create --image IMAGE [flags] [-- ARGV...]",
		Short: "Create a sandbox that fails fast and reports every stage",
		Long: `Create a sandbox and follow it to Ready: Queued → Scheduled → PullingImage → Starting → Ready,
where Ready means a command really ran through the exec daemon. Fails as soon as failure is certain
(unschedulable, image pull, crash, exit, exec daemon silent, deadline) and deletes what it created.

The start command is resolved BEFORE anything is created: --entrypoint (or ARGV after --), else the
entrypoint table (sandscope entrypoints), else the image's ENTRYPOINT+CMD read from the registry; otherwise
the create is refused (ENTRYPOINT_UNRESOLVED). --keep-alive starts tail -f /dev/null instead, on request only.

With --demo the create runs in the embedded simulated fleet, started in this process and gone when it ends:
its registry resolves the start command and its simulated engine and kubelet run the sandbox.

Exit codes: 0 ready, 1 failed after creating (cleaned up), 2 refused before creating, 3 usage/connection error.`,
		Example: `  sandscope create --image python:3.12 -- python -m http.server 8080
  sandscope create --image registry.example.com/app:v3 --cpu 1 --memory 2Gi -o json
  sandscope create --image busybox --keep-alive --timeout 30m`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() < 0 && len(args) > 0 {
				return &ExitError{Code: createExitUsage, Err: fmt.Errorf("unexpected arguments %q: put the start command after --", args)}
			}
			return runCreate(cmd, g, f, args)
		},
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &ExitError{Code: createExitUsage, Err: seeHelp(c, err)}
	})
	fl := cmd.Flags()
	fl.StringVar(&f.image, "image", "", "Image to run (required unless --pool)")
	fl.StringArrayVar(&f.entrypoint, "entrypoint", nil, "Start command, one argv element per flag (or give ARGV after --)")
	fl.StringVar(&f.pool, "pool", "", "Take the Pod from this OpenSandbox Pool (pooled BatchSandbox)")
	fl.StringVar(&f.template, "template", "", "Create an agent-sandbox Sandbox from this SandboxTemplate (its image and command)")
	fl.StringVar(&f.warmPool, "warm-pool", "", "Claim a Sandbox from this agent-sandbox SandboxWarmPool (creates a SandboxClaim; runs the pool's template)")
	fl.StringArrayVar(&f.env, "env", nil, "Environment variable KEY=VALUE (repeatable)")
	fl.DurationVar(&f.lifetime, "timeout", create.DefaultLifetime, "Sandbox lifetime (expireTime); 0 = no expiry. Waiting never outlasts it")
	fl.DurationVar(&f.waitTimeout, "wait-timeout", create.DefaultWaitTimeout, "Total deadline to reach Ready; then Failed with the last stage reached")
	fl.StringVar(&f.cpu, "cpu", "", "CPU request and limit (e.g. 500m, 2)")
	fl.StringVar(&f.memory, "memory", "", "Memory request and limit (e.g. 512Mi)")
	fl.BoolVar(&f.wait, "wait", true, "Follow the sandbox to Ready (false: return once the object is accepted)")
	fl.BoolVar(&f.keepAlive, "keep-alive", false, "Run tail -f /dev/null: the image's ENTRYPOINT/CMD will NOT run")
	fl.BoolVar(&f.keepFailed, "keep-failed", false, "Do not delete a sandbox that failed (for inspection)")
	fl.StringVar(&f.platform, "platform", "linux/amd64", "Platform whose image config is read from a multi-platform index (os/arch[/variant])")
	fl.StringVarP(&f.output, "output", "o", "text", "Output: text (stages on stderr) or json (JSON lines on stdout)")
	fl.StringVar(&f.engine, "engine", "", "bsbx or agent (default: bsbx when the BatchSandbox CRD is served, else agent)")
	fl.StringVar(&f.execdImage, "execd-image", kube.DefaultExecdImage, "Image of the execd-installer init container")
	fl.StringVar(&f.table, "entrypoint-table", kube.DefaultEntrypointsConfigMap, "ConfigMap holding the entrypoint table")
	fl.DurationVar(&f.registryWait, "registry-timeout", imageconfig.DefaultTimeout, "Deadline of the registry read")
	fl.DurationVar(&f.execdWait, "execd-timeout", create.DefaultExecdTimeout, "How long the exec daemon may take to answer once the container runs")
	_ = cmd.RegisterFlagCompletionFunc("pool", g.completePool)
	return cmd
}

func (f *createFlags) request(g *Globals, argv []string) (create.Request, error) {
	req := create.Request{
		Namespace: "", Image: f.image, Entrypoint: f.entrypoint, KeepAlive: f.keepAlive, Pool: f.pool, WarmPool: f.warmPool, Template: f.template,
		CPU: f.cpu, Memory: f.memory, Lifetime: f.lifetime, WaitTimeout: f.waitTimeout, ExecdTimeout: f.execdWait,
		NoWait: !f.wait, KeepFailed: f.keepFailed, Engine: f.engine, ExecdImage: f.execdImage,
		EntrypointTable: f.table,
	}
	if len(argv) > 0 {
		if len(f.entrypoint) > 0 {
			return req, create.Usage("give the start command either with --entrypoint or after --, not both")
		}
		req.Entrypoint = argv
	}
	if f.lifetime == 0 {
		req.Lifetime = -1 // no expiry
	}
	if len(f.env) > 0 {
		req.Env = map[string]string{}
		for _, kv := range f.env {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return req, create.Usage(fmt.Sprintf("--env %q: want KEY=VALUE", kv))
			}
			req.Env[k] = v
		}
	}
	if f.output != "text" && f.output != "json" {
		return req, create.Usage(fmt.Sprintf("-o %q: want text or json", f.output))
	}
	return req, nil
}

func runCreate(cmd *cobra.Command, g *Globals, f *createFlags, argv []string) error {
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	jsonOut := f.output == "json"
	fail := func(err error) error {
		if jsonOut {
			writeJSONLine(out, map[string]any{"error": err})
		} else {
			fmt.Fprintf(errOut, "%s: %s\n", g.program(), textsafe.Line(err.Error()))
		}
		return &ExitError{Code: createExitCode(err), Err: err, Silent: true}
	}
	req, uerr := f.request(g, argv)
	if uerr != nil {
		return fail(uerr)
	}
	if g.ReadOnly { // refuse before connecting; the Creator refuses again
		return fail(create.Refuse(refusal.CodeReadOnly, "read-only mode: create refused (drop --readonly to create)", false))
	}
	platform, err := imageconfig.ParsePlatform(f.platform)
	if err != nil {
		return fail(create.Usage(err.Error()))
	}
	// With --demo the simulated fleet starts in this process, adopts what
	// the create writes and ends with the command; its registry resolves the
	// start command, so --registry-timeout and --platform do not apply.
	ctx := cmd.Context()
	conn, err := g.connect(ctx)
	if err != nil {
		return fail(create.ConnectionError(err))
	}
	defer conn.Close()
	creator := conn.Creator(conn.Executor(backend.ExecOptions{}), conn.Images(imageconfig.Options{Timeout: f.registryWait, Platform: platform}), nil)
	start := time.Now()
	res, cerr := creator.Run(ctx, req, func(u create.StageUpdate) {
		if jsonOut {
			writeJSONLine(out, u)
			return
		}
		if u.Stage == create.StageFailed {
			return // the error line says it
		}
		fmt.Fprintf(errOut, "%7s  %-12s %s\n", "+"+time.Since(start).Round(100*time.Millisecond).String(), u.Stage, textsafe.Line(u.Detail))
	})
	if cerr != nil {
		var ce *create.Error
		if !jsonOut && errors.As(cerr, &ce) && ce.Stage != "" {
			fmt.Fprintf(errOut, "%7s  %-12s %s (executed: %s, retryable: %v)\n", "+"+time.Since(start).Round(100*time.Millisecond).String(),
				create.StageFailed, ce.Code, ce.Executed, ce.Retryable)
		}
		return fail(cerr)
	}
	if jsonOut {
		writeJSONLine(out, res)
		return nil
	}
	for _, n := range res.Notices {
		fmt.Fprintf(errOut, "%s %s: %s\n", n.Severity, n.Code, textsafe.Line(n.Message))
	}
	// The argv may come from the image's config: the registry wrote it.
	if res.Claim != "" {
		fmt.Fprintf(errOut, "claim %s/%s bound to sandbox %s %s (the warm pool's template runs)\n", res.Namespace, res.Claim, res.Sandbox, res.Stage)
	} else {
		fmt.Fprintf(errOut, "sandbox %s/%s %s (entrypoint from %s: %s)\n", res.Namespace, res.Sandbox, res.Stage, res.Entrypoint.Source, textsafe.Line(strings.Join(res.Entrypoint.Argv, " ")))
	}
	if !conn.Outlives() {
		fmt.Fprintln(errOut, "demo: the simulated fleet, and this sandbox in it, end with this command")
	}
	fmt.Fprintln(out, res.Sandbox)
	return nil
}

// Exit codes of `sandscope create` and `sandscope entrypoints` (README).
const (
	createExitFailed  = 1 // failed after creating (cleaned up unless --keep-failed)
	createExitRefused = 2 // refused before creating anything
	createExitUsage   = 3 // a usage error, or no cluster to ask
)

// createExitCode maps the error of a create (or of a change to the
// entrypoint table) to its exit code.
func createExitCode(err error) int {
	var e *create.Error
	var ie *imageconfig.Error
	switch {
	case errors.As(err, &e):
		if e.Created() {
			return createExitFailed
		}
		switch e.Code {
		case refusal.CodeUsage, create.CodeConnection, create.CodeInternal:
			return createExitUsage
		}
		return createExitRefused
	case errors.As(err, &ie): // the registry's answer: nothing was changed
		return createExitRefused
	}
	return createExitFailed
}

func writeJSONLine(w io.Writer, v any) {
	b, err := textsafe.MarshalJSON(v)
	if err != nil {
		b = []byte(fmt.Sprintf(`{"error":{"code":"INTERNAL","message":%q}}`, err.Error()))
	}
	_, _ = w.Write(append(b, '\n')) // stdout, like fmt.Fprint*: nowhere else to report a failed write
}
