package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/sandscope/sandscope/actions/sweep"
	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
	"github.com/sandscope/sandscope/output"
)

type getFlags struct {
	output    string
	noHeaders bool
	selector  string
	read      readFlags
	// allowPartial exits 0 after a partial read (still warned about).
	allowPartial bool
}

func newGetCommand(g *Globals) *cobra.Command {
	f := &getFlags{}
	cmd := &cobra.Command{
		Use:   "get sandboxes|pods|pools|claims|findings [NAME...] [-n NS | -A] [-l SEL] [-o table|wide|json|yaml|name|jsonpath=...]",
		Short: "Print the fleet as sandscope sees it, the kubectl way (for scripts)",
		Long: `get connects, lets the fleet sync once (as sweep does), prints and exits. It lists sandboxes (sb), their
pods (po), pools (OpenSandbox Pools and agent-sandbox SandboxWarmPools), claims (agent-sandbox SandboxClaims with
their sandboxes), or findings (the notices and restart forensics of ` + "`sweep`" + `), in the current namespace, -n NS
or every namespace (-A), optionally only the NAMEs given (for findings: of those sandboxes) and those
matching -l (findings match by their sandbox's labels).

Output, with kubectl's printers and conventions: a table (wide adds columns), json or yaml (apiVersion
` + output.APIVersion + `, kind List with items; one NAME prints the object itself), name (the Kubernetes
objects, e.g. batchsandbox.sandbox.opensandbox.io/NAME, for kubectl), jsonpath=TEMPLATE or jsonpath-file=FILE.

In get, -l/--selector filters what is listed, as kubectl's does; plain-Pod sandboxes are those labelled
opensandbox.io/id.

What the read could not see (a kind forbidden, a lookup that did not finish, an address not checked in other
namespaces, a CRD missing that Pods name) makes it partial: everything seen is printed, each gap is a
"warning: partial:" line on stderr, and get exits 1 unless --allow-partial.

Exit codes: 0 printed; 1 the cluster could not be read, the read was partial, or a NAME was not found;
2 usage error.`,
		Example: strings.ReplaceAll(`  sandscope get sb -A
  sandscope get sandboxes -l team=rl -o wide
  sandscope get findings -A -o jsonpath='{range .items[*]}{.code} {.namespace}/{.sandbox}{"\n"}{end}'
  kubectl describe $(sandscope get sb -n team-rl -o name)`, "sandscope", g.program()),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				// kubectl's habit: name what can be listed, not "requires at least 1 arg".
				return &ExitError{Code: ExitUsage, Err: seeHelp(cmd, fmt.Errorf("get what? %s (e.g. %s get sb -A)", output.ResourceTypes, g.program()))}
			}
			return nil
		},
		ValidArgsFunction: g.completeGet,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGet(cmd.Context(), g, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.output, "output", "o", "", "Output format: "+strings.Join(output.Formats, ", ")+" (default table)")
	fl.BoolVar(&f.noHeaders, "no-headers", false, "Print the table without its header line")
	fl.StringVarP(&f.selector, "selector", "l", "", "Label selector: list only what matches (e.g. -l team=rl,tier!=gpu)")
	f.read.add(fl)
	fl.BoolVar(&f.allowPartial, "allow-partial", false, "Exit 0 after a partial read (what could not be seen is still warned about on stderr)")
	_ = cmd.RegisterFlagCompletionFunc("output", completeOutput)
	return cmd
}

func runGet(ctx context.Context, g *Globals, f *getFlags, args []string) error {
	usage := func(err error) error { return &ExitError{Code: ExitUsage, Err: err} }
	q := output.Query{Names: args[1:]}
	var err error
	if q.Resource, err = output.ParseResource(args[0]); err != nil {
		return usage(err)
	}
	out, err := output.ParseOutput(f.output)
	if err != nil {
		return usage(err)
	}
	if out.Format == "name" && q.Resource == output.Findings {
		return usage(errors.New("-o name: findings have no names; use -o jsonpath"))
	}
	if f.selector != "" {
		if q.Selector, err = labels.Parse(f.selector); err != nil {
			return usage(fmt.Errorf("-l %q: %w", f.selector, err))
		}
	}
	if len(q.Names) > 0 && g.AllNamespaces {
		return usage(errors.New("a NAME cannot be looked up across all namespaces (-A); give -n NS"))
	}
	opts, targets, err := fleetSource(ctx, g, f.read)
	if err != nil {
		return err
	}
	if len(targets) != 1 {
		return usage(fmt.Errorf("get reads one context, not %d: give --context one name", len(targets)))
	}
	snap, findings, unseen, err := readFleet(ctx, g, targets[0], opts, q.Resource == output.Findings)
	if err != nil {
		return err
	}

	items := output.Select(snap, findings, q)
	allNS := len(snap.Status.Namespaces) == 0
	if items.Len() == 0 && (out.Format == "table" || out.Format == "wide") && len(items.Missing) == 0 {
		fmt.Fprintln(g.Err, noResources(snap))
	}
	single := len(q.Names) == 1 && items.Len() == 1 && q.Resource != output.Findings
	err = output.Print(g.Out, items, out, output.PrintOptions{AllNamespaces: allNS, NoHeaders: f.noHeaders, Single: single})
	if err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	if len(items.Missing) > 0 {
		quoted := make([]string, len(items.Missing))
		for i, n := range items.Missing {
			quoted[i] = fmt.Sprintf("%q", n)
		}
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("%s %s not found", q.Resource, strings.Join(quoted, ", "))}
	}
	if len(unseen) > 0 && !f.allowPartial {
		// What was printed may miss what could not be seen: not a clean read.
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("context %s was read partially (%d gap(s) above; --allow-partial to accept)", textsafe.Line(targets[0].Name), len(unseen))}
	}
	return nil
}

// readFleet reads one context once, as a sweep does: connect, sync, and
// for findings analyze. It returns what the read could not see (a partial
// read; sweep.Unseen), each also a "warning: partial:" line on stderr, as
// are the other notes; a context that cannot be read is exit 1.
func readFleet(ctx context.Context, g *Globals, t sweep.Target, opts sweep.Options, analyze bool) (*fleet.Snapshot, []model.Finding, []string, error) {
	ctx, opts, cancel := sweep.WithDeadline(ctx, opts)
	defer cancel()
	cannot := func(err error) error {
		var slow *sweep.SlowError
		if errors.As(err, &slow) {
			// It answered, too slowly to be read whole: not "no answer".
			return &ExitError{Code: ExitFailure, Err: fmt.Errorf("context %s was read partially: %w", t.Name, err)}
		}
		if sweep.TimedOut(ctx) {
			err = fmt.Errorf("no answer within --timeout %s: %w", opts.Timeout, err)
		}
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("context %s: %w", t.Name, err)}
	}
	src, err := t.Open(ctx)
	if err != nil {
		return nil, nil, nil, cannot(err)
	}
	snap, err := src.Snapshot(ctx, opts)
	if err != nil {
		return nil, nil, nil, cannot(err)
	}
	var findings []model.Finding
	var notes []string
	if analyze {
		findings, notes = sweep.Analyze(ctx, t.Name, snap, src, opts)
	}
	unseen := sweep.Unseen(src, snap)
	for _, n := range snap.Status.Notes {
		notes = append(notes, t.Name+": "+n) // a CRD not installed; what was refused or unfinished is below
	}
	for _, n := range notes {
		fmt.Fprintf(g.Err, "warning: %s\n", textsafe.Line(n))
	}
	for _, u := range unseen {
		fmt.Fprintf(g.Err, "warning: partial: %s: %s\n", textsafe.Line(t.Name), textsafe.Line(u))
	}
	return snap, findings, unseen, nil
}

// noResources is kubectl's line for an empty answer.
func noResources(snap *fleet.Snapshot) string {
	if ns := snap.Status.Namespaces; len(ns) == 1 {
		return fmt.Sprintf("No resources found in %s namespace.", textsafe.Line(ns[0]))
	}
	return "No resources found"
}
