package cli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/sandscope/sandscope/actions/create"
	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/actions/inspect"
	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/internal/deadserver"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
)

// Every command is either read-only or mutating. A command added without
// being classified here fails the test: read-only mode must be decided for
// it, not inherited by accident.
var (
	readOnlyCommands = map[string]bool{"sandscope": true, "sweep": true, "entrypoints": true,
		"entrypoints get": true, "entrypoints ls": true, "explain": true, "explain restart": true, "serve": true, "get": true,
		"version": true, "completion": true, "completion bash": true, "completion fish": true, "completion powershell": true, "completion zsh": true}
	// mutating commands, with the arguments that would act.
	mutatingCommands = map[string][]string{
		"exec":            {"exec", "some-sandbox", "--", "touch", "/x"},
		"cp":              {"cp", "./x", "some-sandbox:/x"}, // an upload; downloads stay allowed
		"create":          {"create", "--image", "busybox", "--keep-alive"},
		"entrypoints set": {"entrypoints", "set", "busybox", "--", "/bin/app"},
		"entrypoints rm":  {"entrypoints", "rm", "sha256:" + strings.Repeat("a", 64)},
	}
)

// Under --readonly each mutating command refuses with READ_ONLY before it
// connects: the cluster here refuses every connection, so a command that
// tried to act would fail differently.
func TestReadOnlyRefusesEveryMutatingCommand(t *testing.T) {
	root := NewRootCommand(&Globals{Kube: kube.NewConfigFlags()})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimPrefix(c.CommandPath(), "sandscope ")
		if _, ok := mutatingCommands[path]; !ok && !readOnlyCommands[path] {
			t.Errorf("command %q is neither read-only nor mutating here: classify it", path)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)

	kc := kubeconfigFor(t, "https://"+deadserver.Refusing(t))
	for name, args := range mutatingCommands {
		t.Run(name, func(t *testing.T) {
			code, stderr, _ := runMain(t, append([]string{"--kubeconfig", kc, "--readonly"}, args...)...)
			if code == 0 || !strings.Contains(stderr, "READ_ONLY") {
				t.Errorf("exit %d, want a READ_ONLY refusal; output:\n%s", code, stderr)
			}
			if strings.Contains(stderr, "cannot reach") || strings.Contains(stderr, "refused") && !strings.Contains(stderr, "READ_ONLY") {
				t.Errorf("it tried to connect first:\n%s", stderr)
			}
		})
	}
}

// The actions themselves refuse too, whoever calls them (the TUI's keys
// are gated as well, but a Backend built on these cannot act either): each
// takes ReadOnly once, at construction, and nothing else is needed to get a
// refusal (no cluster is given here at all).
func TestReadOnlyActionsRefuse(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sb := &model.Sandbox{Key: "bsbx/ns/a", Meta: &model.ObjectMeta{Namespace: "ns", Name: "a"}}
	x := execute.New(execute.Options{ReadOnly: true})
	table := &create.Table{ReadOnly: true}
	shell := x.Shell(ctx, sb, execute.ShellOptions{})
	shell.SetStdin(strings.NewReader(""))
	actions := map[string]func() error{
		"exec": func() error {
			_, err := x.Run(ctx, execute.Request{Sandbox: sb, Command: []string{"touch", "/x"}})
			return err
		},
		"shell": shell.Run,
		"create": func() error {
			_, err := (&create.Creator{ReadOnly: true}).Run(ctx, create.Request{Image: "busybox", KeepAlive: true}, nil)
			return err
		},
		"entrypoints set": func() error { _, err := table.Set(ctx, "busybox", []string{"/bin/app"}); return err },
		"entrypoints rm": func() error {
			_, _, err := table.Remove(ctx, "sha256:"+strings.Repeat("a", 64))
			return err
		},
		"delete": func() error { return inspect.New(nil, true).Delete(ctx, sb) },
	}
	for name, act := range actions {
		err := act()
		var r *refusal.Error
		if err == nil || !errors.As(err, &r) || r.Code != refusal.CodeReadOnly || r.Executed != refusal.ExecutedNo {
			t.Errorf("%s under read-only: %v, want a READ_ONLY refusal", name, err)
		}
	}
}

func TestVersionFlag(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Main([]string{"--version"}, strings.NewReader(""), &out, &errOut)
	if code != 0 || !strings.HasPrefix(out.String(), "sandscope version ") || strings.TrimSpace(strings.TrimPrefix(out.String(), "sandscope version ")) == "" {
		t.Fatalf("exit %d stdout %q stderr %q", code, out.String(), errOut.String())
	}
}
