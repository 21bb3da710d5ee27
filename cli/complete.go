package cli

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sandscope/sandscope/internal/crash"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/output"
)

// completionTimeout bounds what one completion may ask the cluster: the
// shell waits for the answer while the user waits for the shell.
const completionTimeout = 2 * time.Second

const noFiles = cobra.ShellCompDirectiveNoFileComp

// namesFunc lists completion candidates from the cluster; namespace is
// the one the command line points at ("" with -A).
type namesFunc func(ctx context.Context, c *kube.Clients, namespace string) ([]string, error)

// fromCluster answers a completion with list's names that start with
// toComplete. Whatever goes wrong (no kubeconfig, a cluster that does not
// answer within completionTimeout, RBAC) completes nothing: a message
// would land in the user's command line. The demo has no cluster to ask.
func (g *Globals) fromCluster(cmd *cobra.Command, toComplete string, list namesFunc) ([]string, cobra.ShellCompDirective) {
	if e, err := g.env(); err == nil && !e.HasCluster() {
		return nil, noFiles
	}
	parent := cmd.Context()
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithTimeout(parent, completionTimeout)
	defer cancel()
	// Discovery and credential plugins do not all take a context: the
	// answer is waited for only as long as the timeout, and the process
	// ends right after.
	found := make(chan []string, 1)
	crash.Go(func() {
		defer close(found)
		c, err := kube.Connect(ctx, g.Kube, kube.ConnectOptions{AllNamespaces: g.AllNamespaces, SkipProbe: true})
		if err != nil {
			return
		}
		ns := c.Namespace
		if g.AllNamespaces {
			ns = ""
		}
		if names, err := list(ctx, c, ns); err == nil {
			found <- names
		}
	})
	select {
	case names := <-found:
		return withPrefix(names, toComplete, ""), noFiles
	case <-ctx.Done():
		return nil, noFiles
	}
}

// withPrefix keeps the names that start with toComplete, each after lead
// (the part of a comma list already typed).
func withPrefix(names []string, toComplete, lead string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if strings.HasPrefix(lead+n, toComplete) {
			out = append(out, lead+n)
		}
	}
	return out
}

// completeSandbox completes a command's one SANDBOX argument (exec,
// explain restart): the sandboxes of the namespace the command line
// points at. Nothing after it (exec's command after -- included).
// ArgsLenAtDash is no help here: cobra parses the flags twice to complete,
// once with a -- added, and pflag keeps the first parse's count.
func (g *Globals) completeSandbox(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, noFiles
	}
	return g.fromCluster(cmd, toComplete, g.sandboxNames)
}

// completeGet completes get's resource, then the names of that resource.
func (g *Globals) completeGet(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return withPrefix(output.Resources, toComplete, ""), noFiles
	}
	resource, err := output.ParseResource(args[0])
	if err != nil {
		return nil, noFiles
	}
	list := g.sandboxNames // findings are named by their sandbox
	switch resource {
	case output.Pods:
		list = func(ctx context.Context, c *kube.Clients, ns string) ([]string, error) {
			return c.SandboxPodNames(ctx, ns, g.Selector)
		}
	case output.Pools:
		list = poolNames
	}
	names, directive := g.fromCluster(cmd, toComplete, list)
	return slices.DeleteFunc(names, func(n string) bool { return slices.Contains(args[1:], n) }), directive
}

func (g *Globals) sandboxNames(ctx context.Context, c *kube.Clients, ns string) ([]string, error) {
	return c.SandboxNames(ctx, ns, g.Selector)
}

func poolNames(ctx context.Context, c *kube.Clients, ns string) ([]string, error) {
	return c.PoolNames(ctx, ns)
}

// completeOutput completes get's -o; jsonpath= waits for its template.
func completeOutput(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	formats := withPrefix(output.Formats, toComplete, "")
	if len(formats) == 1 && strings.HasSuffix(formats[0], "=") {
		return formats, noFiles | cobra.ShellCompDirectiveNoSpace
	}
	return formats, noFiles
}

// completePool completes a --pool flag: the Pools of the namespace.
func (g *Globals) completePool(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return g.fromCluster(cmd, toComplete, poolNames)
}

// addGlobalCompletions completes the flags every command shares:
// --namespace from the namespaces that hold sandboxes (every namespace
// when that cannot be listed), --context from the kubeconfig alone.
func addGlobalCompletions(root *cobra.Command, g *Globals) {
	_ = root.RegisterFlagCompletionFunc("namespace", func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return g.fromCluster(cmd, toComplete, func(ctx context.Context, c *kube.Clients, _ string) ([]string, error) {
			names, err := c.SandboxNamespaces(ctx, g.Selector)
			if err != nil || len(names) == 0 {
				return c.NamespaceNames(ctx)
			}
			return names, nil
		})
	})
	_ = root.RegisterFlagCompletionFunc("context", func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		raw, err := g.Kube.ToRawKubeConfigLoader().RawConfig()
		if err != nil {
			return nil, noFiles
		}
		names := make([]string, 0, len(raw.Contexts))
		for name := range raw.Contexts {
			names = append(names, name)
		}
		slices.Sort(names)
		// sweep takes a comma list: complete its last entry.
		lead := toComplete[:strings.LastIndex(toComplete, ",")+1]
		return withPrefix(names, toComplete, lead), noFiles
	})
}
