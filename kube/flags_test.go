package kube

import (
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig with contexts a and b (current: a),
// each on its own server.
func writeKubeconfig(t *testing.T) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	for name, server := range map[string]string{"a": "https://a.example:6443", "b": "https://b.example:6443"} {
		cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server}
		cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: "token-" + name}
		cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: "ns-" + name}
	}
	cfg.CurrentContext = "a"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func parseConfigFlags(t *testing.T, args ...string) *ConfigFlags {
	t.Helper()
	f := NewConfigFlags()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	f.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parsing %q: %v", args, err)
	}
	return f
}

// The flags resolve as kubectl's do: the kubeconfig's current context by
// default; --context, -n and -s override it; WithContext changes only the
// copy.
func TestConfigFlagsResolveLikeKubectl(t *testing.T) {
	t.Parallel()
	path := writeKubeconfig(t)

	def := parseConfigFlags(t, "--kubeconfig", path)
	cfg, err := def.ToRESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	ns, _, err := def.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://a.example:6443" || cfg.BearerToken != "token-a" || ns != "ns-a" {
		t.Fatalf("default: host %q token %q namespace %q, want context a's", cfg.Host, cfg.BearerToken, ns)
	}

	f := parseConfigFlags(t, "--kubeconfig", path, "--context", "b", "-n", "team", "--token", "override")
	if f.Context() != "b" || f.Namespace() != "team" {
		t.Fatalf("Context() %q Namespace() %q, want b and team", f.Context(), f.Namespace())
	}
	cfg, err = f.ToRESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	ns, _, _ = f.ToRawKubeConfigLoader().Namespace()
	if cfg.Host != "https://b.example:6443" || cfg.BearerToken != "override" || ns != "team" {
		t.Fatalf("--context b -n team --token override: host %q token %q namespace %q", cfg.Host, cfg.BearerToken, ns)
	}

	other := f.WithContext("a")
	cfg, err = other.ToRESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://a.example:6443" || f.Context() != "b" {
		t.Fatalf("WithContext(a): host %q, original context now %q; want a's host and b unchanged", cfg.Host, f.Context())
	}

	s := parseConfigFlags(t, "--kubeconfig", path, "-s", "https://elsewhere:6443", "--as", "alice", "--as-group", "g1", "--as-group", "g2")
	cfg, err = s.ToRESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://elsewhere:6443" || cfg.Impersonate.UserName != "alice" || len(cfg.Impersonate.Groups) != 2 {
		t.Fatalf("-s/--as/--as-group: host %q impersonate %+v", cfg.Host, cfg.Impersonate)
	}
}

// A context the kubeconfig does not have is an error, not a silent default.
func TestConfigFlagsUnknownContext(t *testing.T) {
	t.Parallel()
	f := parseConfigFlags(t, "--kubeconfig", writeKubeconfig(t), "--context", "nope")
	if _, err := f.ToRESTConfig(); err == nil {
		t.Fatal("ToRESTConfig with --context nope: no error")
	}
}
