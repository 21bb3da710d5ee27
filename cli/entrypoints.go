package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sandscope/sandscope/actions/create"
	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/imageconfig"
	"github.com/sandscope/sandscope/output"
)

func newEntrypointsCommand(g *Globals) *cobra.Command {
	var (
		table    string
		platform string
		format   string
		timeout  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "entrypoints",
		Short: "Manage the entrypoint table (image digest → start command) used by create",
		Long: `The entrypoint table is a ConfigMap in the namespace (default sandscope-entrypoints) mapping an
image DIGEST to the start command create uses when none is given. Images are resolved to their digest
through the registry, so a tag moved to another image is not matched by accident.`,
	}
	cmd.Args, cmd.RunE = subcommandsOnly(createExitUsage)
	pf := cmd.PersistentFlags()
	pf.StringVar(&table, "entrypoint-table", kube.DefaultEntrypointsConfigMap, "ConfigMap holding the table")
	pf.StringVar(&platform, "platform", "linux/amd64", "Platform used to read a multi-platform image")
	pf.StringVarP(&format, "output", "o", "text", "Output: text or json")
	pf.DurationVar(&timeout, "registry-timeout", imageconfig.DefaultTimeout, "Deadline of a registry read")

	tableFor := func(cmd *cobra.Command) (*create.Table, error) {
		if format != "text" && format != "json" {
			return nil, &ExitError{Code: createExitUsage, Err: fmt.Errorf("-o %q: want text or json", format)}
		}
		p, err := imageconfig.ParsePlatform(platform)
		if err != nil {
			return nil, &ExitError{Code: createExitUsage, Err: err}
		}
		// With --demo the table lives in the simulated fleet, for as long
		// as the command, and images resolve through its registry.
		conn, err := g.connect(cmd.Context())
		if err != nil {
			return nil, &ExitError{Code: createExitUsage, Err: err}
		}
		return &create.Table{
			Clients: conn.Clients, Namespace: conn.Clients.Namespace, Name: table, ReadOnly: g.ReadOnly,
			Images: conn.Images(imageconfig.Options{Timeout: timeout, Platform: p}),
		}, nil
	}
	fail := func(err error) error { return &ExitError{Code: createExitCode(err), Err: err} }

	// tableToChange is tableFor for a change: under --readonly the change
	// is refused before any connection (the Table refuses again).
	tableToChange := func(cmd *cobra.Command) (*create.Table, error) {
		if g.ReadOnly {
			return nil, fail(create.Refuse(refusal.CodeReadOnly, "read-only mode: the entrypoint table is not changed", false))
		}
		return tableFor(cmd)
	}
	noEntry := func(image, digest string) error {
		return &ExitError{Code: createExitFailed, Err: fmt.Errorf("no entry for %s (digest %s) in %s", image, digest, table)}
	}
	// printEntry writes e under -o json, else the line.
	printEntry := func(cmd *cobra.Command, e kube.EntrypointEntry, line string) {
		if format == "json" {
			writeJSONLine(cmd.OutOrStdout(), output.EntrypointJSON(e))
			return
		}
		fmt.Fprintln(cmd.OutOrStdout(), line)
	}

	set := &cobra.Command{
		Use:   "set IMAGE -- ARGV...",
		Short: "Store the start command for IMAGE's digest",
		Args: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 1 || len(args) < 2 {
				return &ExitError{Code: createExitUsage, Err: errors.New("usage: " + g.program() + " entrypoints set IMAGE -- ARGV...")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := tableToChange(cmd)
			if err != nil {
				return err
			}
			e, err := t.Set(cmd.Context(), args[0], args[1:])
			if err != nil {
				return fail(err)
			}
			printEntry(cmd, e, fmt.Sprintf("%s (%s) → %s", textsafe.Line(e.Digest), textsafe.Line(e.Image), textsafe.Line(strings.Join(e.Argv, " "))))
			return nil
		},
	}
	get := &cobra.Command{
		Use:   "get IMAGE",
		Short: "Show the start command stored for IMAGE's digest",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := tableFor(cmd)
			if err != nil {
				return err
			}
			e, digest, ok, err := t.Get(cmd.Context(), args[0])
			if err != nil {
				return fail(err)
			}
			if !ok {
				return noEntry(args[0], digest)
			}
			// The table is a ConfigMap anyone with write access to it
			// filled: what it says is shown, not obeyed.
			printEntry(cmd, e, textsafe.Line(strings.Join(e.Argv, " ")))
			return nil
		},
	}
	ls := &cobra.Command{
		Use:   "ls",
		Short: "List the table",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := tableFor(cmd)
			if err != nil {
				return err
			}
			tbl, err := t.List(cmd.Context())
			if err != nil {
				return fail(err)
			}
			if format == "json" {
				rows := []any{}
				for _, e := range tbl.Sorted() {
					rows = append(rows, output.EntrypointJSON(e))
				}
				writeJSONLine(cmd.OutOrStdout(), map[string]any{"namespace": tbl.Namespace, "configMap": tbl.Name, "entries": rows, "malformed": tbl.Malformed})
				return nil
			}
			output.WriteEntrypoints(cmd.OutOrStdout(), tbl.Sorted())
			for _, k := range tbl.Malformed {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: malformed entry %s in configmap %s/%s ignored\n", textsafe.Line(strconv.Quote(k)), tbl.Namespace, tbl.Name)
			}
			return nil
		},
	}
	rm := &cobra.Command{
		Use:   "rm IMAGE|DIGEST",
		Short: "Remove the entry for IMAGE's digest",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := tableToChange(cmd)
			if err != nil {
				return err
			}
			digest, removed, err := t.Remove(cmd.Context(), args[0])
			if err != nil {
				return fail(err)
			}
			if !removed {
				return noEntry(args[0], digest)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed %s\n", digest)
			return nil
		},
	}
	// The whole family (the parent too) answers a bad flag with its usage code.
	for _, c := range []*cobra.Command{cmd, set, get, ls, rm} {
		c.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
			return &ExitError{Code: createExitUsage, Err: seeHelp(c, err)}
		})
	}
	cmd.AddCommand(set, get, ls, rm)
	return cmd
}

func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return &ExitError{Code: createExitUsage, Err: fmt.Errorf("%s: want %d argument(s), got %d", cmd.CommandPath(), n, len(args))}
		}
		return nil
	}
}
