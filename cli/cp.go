package cli

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/actions/files"
	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/backend"
	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/model"
)

type cpFlags struct {
	execFlags
	maxBytes   int64
	maxEntries int
}

func newCpCommand(g *Globals) *cobra.Command {
	f := &cpFlags{}
	cmd := &cobra.Command{
		Use:   "cp [-n NS] SRC DST [-c CONTAINER] [--via kube|execd|execd-direct] [-o text|json]",
		Short: "Copy files to or from a sandbox, after proving the target is still the sandbox's own Pod",
		Long: `cp copies a file or a directory between this machine and a sandbox, in kubectl cp's syntax:
  sandscope cp SANDBOX:/remote/path LOCAL     download (into LOCAL when it is a directory)
  sandscope cp LOCAL SANDBOX:/remote/path     upload (/remote/path becomes the copy)
  pod/NAME:/path names a Pod; - is standard input (upload) or output (one file, download).
  sandscope cp --selector SEL|--all-of-pool POOL LOCAL :/path -o jsonl   upload to many, one JSON line each

The target is checked as exec checks it (Pod name, UID and current IP, read live) before anything is sent
or read, and again after. A download is extracted beside its destination under a temporary name and put in
place only once the second check passed. What comes back from a sandbox is hostile: an archive entry that
would land outside the destination (absolute, .., through or as a symlink pointing out, a hard link to
anything but a file it wrote), a device or FIFO, or more than --max-bytes / --max-entries refuses the whole
download and leaves nothing; set-uid bits are dropped.

Transports: kube (tar over pods/exec, as kubectl cp), execd and execd-direct (execd's files API, one file).

Exit codes: 0 copied and confirmed; 2 a usage error (code USAGE); 1 the copy reached the sandbox's own Pod
and failed there (nothing
written for a download); 125 refused before anything was sent or written; 126 unknown (an upload may be
partly written; a download is kept only under the temporary name it names). A failure prints one JSON
object on stderr: {"error":{"code","message","retryable","executed","written","evidence"}}.`,
		ValidArgsFunction: g.completeSandbox,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCp(cmd.Context(), g, f, args[0], args[1])
		},
	}
	// Every usage error is the JSON error object, as cp's others are.
	jsonUsage(cmd, func(err error) error { return usageAs(func(err error) error { return printCpError(g, err) }, err) }, cobra.ExactArgs(2))
	addTargetFlags(cmd, g, &f.execFlags, targetFlagHelp{
		via:         "Transport: kube (tar over pods/exec), execd or execd-direct (execd's files API, one file)",
		timeout:     "Give up after this long (outcome unknown, exit 126); 0 = no limit",
		expectUID:   "Refuse (UID_CHANGED) unless the sandbox's Pod still has this UID",
		allOfPool:   "Upload to every BatchSandbox of this Pool (DST is :/path; -o jsonl)",
		maxParallel: "With --selector/--all-of-pool: uploads at once",
		output:      "text or json for one copy; jsonl (the default) for many",
	})
	fl := cmd.Flags()
	fl.Int64Var(&f.maxBytes, "max-bytes", files.DefaultLimits.MaxBytes, "Refuse a download (or standard input) larger than this many bytes")
	fl.IntVar(&f.maxEntries, "max-entries", files.DefaultLimits.MaxEntries, "Refuse a download of more entries than this")
	return cmd
}

// cpLine is one copy's outcome for programs: -o json, and each line of a
// fan-out.
type cpLine struct {
	Sandbox string           `json:"sandbox,omitempty"`
	Written refusal.Executed `json:"written"`
	*files.Outcome
	Error *cpError `json:"error,omitempty"`
}

// cpError is a copy's refusal or failure with the contract's written key
// beside executed (the same value: for a copy, what ran is what was
// written). The embedded *refusal.Error is its field Error, which hides the
// method: cpError is JSON, never an error.
type cpError struct {
	*refusal.Error
	Written refusal.Executed `json:"written"`
}

func newCpError(err error) *cpError {
	var r *refusal.Error
	if !errors.As(err, &r) {
		r = &refusal.Error{Code: execute.CodeTransport, Message: err.Error(), Executed: refusal.ExecutedUnknown, Err: err}
	}
	c := *r
	if c.Evidence == nil {
		c.Evidence = []model.Evidence{}
	}
	return &cpError{Error: &c, Written: c.Executed}
}

func runCp(ctx context.Context, g *Globals, f *cpFlags, srcArg, dstArg string) error {
	quietClientGo()
	fail := func(err error) error { return printCpError(g, err) }
	usage := func(format string, args ...any) error { return fail(usageRefusal(format, args...)) }
	src, err := files.ParseLocation(srcArg)
	if err != nil {
		return usage("%v", err)
	}
	dst, err := files.ParseLocation(dstArg)
	if err != nil {
		return usage("%v", err)
	}
	via, err := execute.ParseVia(f.via)
	if err != nil {
		return usage("%v", err)
	}
	fanOut := f.pool != "" || g.Selector != ""
	switch {
	case f.pool != "" && g.Selector != "":
		return usage("--all-of-pool and --selector each pick the targets: give one (the pool's sandboxes are not filtered by labels)")
	case src.Remote && dst.Remote:
		return usage("copy between two sandboxes is not supported: one side must be local")
	case !src.Remote && !dst.Remote:
		return usage("neither %q nor %q names a sandbox (SANDBOX:/path or pod/NAME:/path)", srcArg, dstArg)
	case fanOut && (src.Remote || dst.Ref != ""):
		return usage("with --selector or --all-of-pool, cp uploads: LOCAL :/path")
	case !fanOut && dst.Remote && dst.Ref == "":
		return usage("%q names no sandbox (:/path is for --selector or --all-of-pool)", dstArg)
	case fanOut && f.output != "" && f.output != "jsonl":
		return usage("-o %s: cp over many sandboxes writes jsonl only", f.output)
	case !fanOut && f.output != "" && f.output != "text" && f.output != "json":
		return usage("-o %s: want text or json", f.output)
	case f.maxBytes < 1 || f.maxEntries < 1:
		return usage("--max-bytes and --max-entries must be positive")
	}
	if g.ReadOnly && dst.Remote {
		return fail(refusal.New(refusal.CodeReadOnly, "sandscope runs read-only (--readonly): uploads are refused; downloads stay allowed", false))
	}
	conn, token, err := connectForTargets(ctx, g, &f.execFlags, fanOut)
	if err != nil {
		return fail(err)
	}
	defer conn.Close()
	if !conn.CanForward() {
		return usage("cp copies through tar in the sandbox's Pod, which the demo's simulated Pods do not run: nothing was copied")
	}
	xo := backend.ExecOptions{Token: token, Port: f.execdPort}
	copier := func(x *execute.Executor) *files.Copier {
		return &files.Copier{Exec: x, ReadOnly: g.ReadOnly, Limits: files.Limits{MaxBytes: f.maxBytes, MaxEntries: f.maxEntries}}
	}
	target := files.Target{Container: f.container, Via: via, Timeout: f.timeout, ExpectUID: f.expectUID, ExpectIP: f.expectIP}
	if fanOut {
		return runCpMany(ctx, g, f, conn, xo, target, src.Path, dst.Path, copier)
	}
	x, namespace, err := conn.LookupExecutor(ctx, xo, f.syncTimeout)
	if err != nil {
		return fail(unreachedRefusal(err))
	}
	c := copier(x)
	target.Namespace = namespace
	var out files.Outcome
	if dst.Remote {
		target.Ref = dst.Ref
		out, err = c.Upload(ctx, files.Upload{Target: target, Source: src.Path, Stdin: g.In, RemotePath: dst.Path})
	} else {
		target.Ref = src.Ref
		// The file's bytes pass as they are, for a pipe or a file; on a
		// terminal Download itself shows control characters as stand-ins.
		stdout, _ := g.rawStreams()
		out, err = c.Download(ctx, files.Download{Target: target, RemotePath: src.Path, Dest: dst.Path, Stdout: stdout})
	}
	if err != nil {
		return fail(err)
	}
	switch {
	case f.output == "json":
		return textsafe.WriteJSON(g.Out, cpLine{Written: out.Written, Outcome: &out}, "")
	case dst.Stdio():
		return nil // the file is the output
	}
	fmt.Fprintf(g.Err, "copied %s → %s (%d bytes, %d entries; pod %s uid %s)\n", textsafe.Line(out.Source), textsafe.Line(out.Dest),
		out.Bytes, out.Entries, out.Target.Pod, out.Target.UID)
	for _, ev := range out.Evidence {
		fmt.Fprintf(g.Err, "  %s: %s\n", ev.Kind, textsafe.Line(ev.Text))
	}
	return nil
}

// runCpMany uploads one local file or directory to every sandbox the
// selector or pool picks, each checked on its own, one JSON line each.
// The targets are picked as exec's (backend.Conn.ManyExecutor); a
// selection that picks none copies nothing and says so.
func runCpMany(ctx context.Context, g *Globals, f *cpFlags, conn *backend.Conn, xo backend.ExecOptions, target files.Target, local, remote string,
	copier func(*execute.Executor) *files.Copier) error {
	if f.expectUID != "" || f.expectIP != "" {
		return printCpError(g, usageRefusal("--expect-uid/--expect-ip name one Pod: give one target instead"))
	}
	if local == "-" {
		return printCpError(g, usageRefusal("standard input cannot be uploaded to many sandboxes: give a local file"))
	}
	sel := fanOutSelection(g, &f.execFlags)
	x, keys, err := conn.ManyExecutor(ctx, xo, sel, f.syncTimeout)
	if err != nil {
		return printCpError(g, unreachedRefusal(err))
	}
	if len(keys) == 0 {
		return printCpError(g, noTargets(sel))
	}
	c := copier(x)
	var mu sync.Mutex
	var unknown, refused bool
	eg := new(errgroup.Group)
	eg.SetLimit(max(f.maxParallel, 1))
	for _, key := range keys {
		eg.Go(func() error {
			t := target
			t.Ref = key
			out, err := c.Upload(ctx, files.Upload{Target: t, Source: local, RemotePath: remote})
			line := cpLine{Sandbox: key, Written: out.Written}
			if err != nil {
				line.Error = newCpError(err)
				line.Written = line.Error.Written
			} else {
				line.Outcome = &out
			}
			mu.Lock()
			defer mu.Unlock()
			unknown = unknown || line.Written == refusal.ExecutedUnknown
			refused = refused || line.Written == refusal.ExecutedNo
			_ = textsafe.WriteJSON(g.Out, line, "") // a broken stdout shows in the pipeline's exit code
			return nil
		})
	}
	_ = eg.Wait()
	switch {
	case unknown:
		return exitWith(execExitUnknown)
	case refused:
		return exitWith(execExitRefused)
	}
	return nil
}

// printCpError writes the JSON error line (and, on a terminal, one line for
// a person) and maps the refusal to cp's exit code.
func printCpError(g *Globals, err error) error {
	w := g.Err
	e := newCpError(err)
	if _, stderr := g.rawStreams(); isTerminal(stderr) {
		fmt.Fprintf(w, "%s: %s\n", g.program(), textsafe.Line(e.Error.Error()))
	}
	b, _ := textsafe.MarshalJSON(struct {
		Error *cpError `json:"error"`
	}{e})
	fmt.Fprintf(w, "%s\n", b)
	code := execExitUnknown
	switch {
	case e.Code == refusal.CodeUsage:
		code = ExitUsage
	case e.Code == files.CodeRemoteFailed && e.Executed == refusal.ExecutedNo:
		code = ExitFailure
	case e.Executed == refusal.ExecutedNo:
		code = execExitRefused
	}
	return &ExitError{Code: code, Err: e.Error, Silent: true}
}
