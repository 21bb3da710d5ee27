// Package kube is the only part of sandscope that talks to the Kubernetes API
// server: client construction, discovery, informers that feed the fleet
// model, and the transports that reach into Pods.
package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/sandscope/sandscope/internal/textsafe"
)

// DefaultRequestTimeout bounds the connection check when --request-timeout
// is unset ("0"), so an unreachable cluster is reported instead of hanging.
const DefaultRequestTimeout = 10 * time.Second

// Clients is one connection to one cluster context, built the way kubectl
// builds it from the same flags.
type Clients struct {
	// Config uses protobuf for built-in types (JSON fallback); no overall
	// timeout, so watches live as long as their context.
	Config    *rest.Config
	Kube      kubernetes.Interface
	Dynamic   dynamic.Interface // JSON: custom resources have no protobuf
	Discovery discovery.DiscoveryInterface

	Context string // kubeconfig context in use
	Cluster string // kubeconfig cluster name
	User    string // kubeconfig user (AuthInfo) name
	// ServerVersion is the API server's gitVersion, read by Probe ("" until then).
	ServerVersion string
	Server        string // API server URL
	Namespace     string // -n, or the context's namespace, or "default"
	// AllNamespaces is -A; when true Namespace is only the default for creates.
	AllNamespaces  bool
	RequestTimeout time.Duration

	// early is a discovery of the engines started beside the connection
	// check (ConnectOptions.Discover), which Sources takes; nil when none.
	early *earlyDiscovery
}

// ConnectError is a failure to reach or use a cluster, phrased as one line
// that names the context and the server.
type ConnectError struct {
	Context string
	Server  string
	Reason  string
	// Local: the configuration itself is wrong or missing (no kubeconfig,
	// no such context, no cluster): retrying cannot help.
	Local bool
	// Denied: the server answered and refused the credentials (401) or the
	// access (403): retrying cannot help until they change.
	Denied bool
	Err    error
}

func (e *ConnectError) Error() string {
	var b strings.Builder
	b.WriteString(e.Reason)
	if e.Context != "" {
		fmt.Fprintf(&b, " (context %q", e.Context)
		if e.Server != "" {
			fmt.Fprintf(&b, ", server %s", e.Server)
		}
		b.WriteString(")")
	} else if e.Server != "" {
		fmt.Fprintf(&b, " (server %s)", e.Server)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %s", oneLine(e.Err.Error()))
	}
	return b.String()
}

func (e *ConnectError) Unwrap() error { return e.Err }

// maxContextsNamed bounds how many contexts an error lists: a kubeconfig
// merged from many files can hold hundreds.
const maxContextsNamed = 20

// ContextsKnown says which contexts a kubeconfig has, for an error about
// one it lacks.
func ContextsKnown(names []string) error {
	switch {
	case len(names) == 0:
		return errors.New("the kubeconfig has no context")
	case len(names) > maxContextsNamed:
		return fmt.Errorf("its contexts: %s and %d more", strings.Join(names[:maxContextsNamed], ", "), len(names)-maxContextsNamed)
	}
	return fmt.Errorf("its contexts: %s", strings.Join(names, ", "))
}

// ConnectOptions are the knobs beyond the kubectl flags.
type ConnectOptions struct {
	AllNamespaces bool
	// SkipProbe skips the reachability check (the caller probes itself).
	SkipProbe bool
	// Discover starts discovering the engines (DiscoverSources) beside the
	// reachability check rather than after it, for a command that reads the
	// fleet next: over a real network each request one after the other is a
	// round trip. Clients.Sources takes the answer. Ignored with SkipProbe.
	Discover bool
	// QPS and Burst of the client-side rate limiter; informers need more than
	// client-go's default 5/10. Zero means 50/100.
	QPS   float32
	Burst int
}

// Target names the context and server the flags point at, as Connect
// will resolve them, without connecting ("" for what the kubeconfig does
// not say). For a "connecting to ..." line while Connect runs.
func Target(flags *ConfigFlags) (context, server string) {
	raw, err := flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return "", flags.Overrides.ClusterInfo.Server
	}
	context = raw.CurrentContext
	if flags.Context() != "" {
		context = flags.Context()
	}
	cluster := ""
	if kctx, ok := raw.Contexts[context]; ok {
		cluster = kctx.Cluster
	}
	if name := flags.Overrides.Context.Cluster; name != "" {
		cluster = name
	}
	if cl, ok := raw.Clusters[cluster]; ok {
		server = cl.Server
	}
	if s := flags.Overrides.ClusterInfo.Server; s != "" {
		server = s
	}
	return context, server
}

// Connect builds clients from kubectl-style flags and proves, within the
// request timeout, that the server answers and accepts the credentials.
func Connect(ctx context.Context, flags *ConfigFlags, opts ConnectOptions) (*Clients, error) {
	loader := flags.ToRawKubeConfigLoader()
	raw, err := loader.RawConfig()
	if err != nil {
		return nil, &ConnectError{Reason: "cannot load kubeconfig " + kubeconfigPath(flags), Local: true, Err: err}
	}
	c := &Clients{Context: raw.CurrentContext, AllNamespaces: opts.AllNamespaces}
	if flags.Context() != "" {
		c.Context = flags.Context()
	}
	if kctx, ok := raw.Contexts[c.Context]; ok {
		c.Cluster, c.User = kctx.Cluster, kctx.AuthInfo
	}
	if u := flags.Overrides.Context.AuthInfo; u != "" {
		c.User = u
	}
	if name := flags.Overrides.Context.Cluster; name != "" {
		c.Cluster = name
	}
	if cl, ok := raw.Clusters[c.Cluster]; ok {
		c.Server = cl.Server
	}
	if c.Context != "" {
		kctx, ok := raw.Contexts[c.Context]
		if !ok {
			return nil, &ConnectError{Context: c.Context, Reason: "context not found in kubeconfig " + kubeconfigPath(flags), Local: true,
				Err: ContextsKnown(slices.Sorted(maps.Keys(raw.Contexts)))}
		}
		if _, ok := raw.Clusters[c.Cluster]; !ok && flags.Overrides.ClusterInfo.Server == "" {
			// clientcmd reports this as an empty configuration ("no
			// kubeconfig found"), which sends the user looking for the file.
			return nil, &ConnectError{Context: c.Context, Local: true,
				Reason: fmt.Sprintf("cluster %q of the context is not defined in kubeconfig %s", textsafe.OrDash(kctx.Cluster), kubeconfigPath(flags))}
		}
	}
	if len(raw.Clusters) == 0 && flags.Overrides.ClusterInfo.Server == "" && os.Getenv("KUBERNETES_SERVICE_HOST") == "" {
		return nil, &ConnectError{Reason: "no cluster configured: kubeconfig " + kubeconfigPath(flags) + " is missing or empty (set KUBECONFIG or --kubeconfig, or try --demo)", Local: true}
	}
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		reason := "cannot build a client configuration"
		if clientcmd.IsEmptyConfig(err) {
			reason = "no kubeconfig found (set KUBECONFIG or --kubeconfig)"
			err = nil
		}
		return nil, &ConnectError{Context: c.Context, Server: c.Server, Reason: reason, Local: true, Err: err}
	}
	if cfg.Host != "" {
		c.Server = cfg.Host
	}
	c.Namespace, _, err = loader.Namespace()
	if err != nil || c.Namespace == "" {
		c.Namespace = "default"
	}
	c.RequestTimeout = cfg.Timeout
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	// The request timeout bounds one-shot calls through contexts; a client
	// timeout would also cut every watch after that long.
	cfg.Timeout = 0
	cfg.QPS, cfg.Burst = opts.QPS, opts.Burst
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 100
	}
	if err := c.init(cfg); err != nil {
		return nil, &ConnectError{Context: c.Context, Server: c.Server, Reason: "cannot build clients", Err: err}
	}
	if opts.SkipProbe {
		return c, nil
	}
	if opts.Discover {
		c.early = startDiscovery(ctx, c.Discovery)
	}
	if err := c.Probe(ctx); err != nil {
		c.early.stop()
		return nil, err
	}
	return c, nil
}

// NewClients wraps an existing rest.Config (tests, in-cluster use).
func NewClients(cfg *rest.Config, namespace string) (*Clients, error) {
	c := &Clients{Server: cfg.Host, Namespace: namespace, RequestTimeout: DefaultRequestTimeout}
	if c.Namespace == "" {
		c.Namespace = "default"
	}
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 100
	}
	return c, c.init(cfg)
}

func (c *Clients) init(cfg *rest.Config) error {
	kubeCfg := rest.CopyConfig(cfg)
	kubeCfg.ContentType = "application/vnd.kubernetes.protobuf"
	kubeCfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	c.Config = kubeCfg
	var err error
	if c.Kube, err = kubernetes.NewForConfig(kubeCfg); err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	if c.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("discovery client: %w", err)
	}
	c.Discovery = disc
	return nil
}

// Probe asks the server for its version within the request timeout and turns
// every failure into one ConnectError line.
func (c *Clients) Probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.RequestTimeout)
	defer cancel()
	body, err := c.Kube.Discovery().RESTClient().Get().AbsPath("/version").DoRaw(ctx)
	if err != nil {
		return c.classify(ctx, err)
	}
	var v version.Info
	if json.Unmarshal(body, &v) == nil {
		c.ServerVersion = v.GitVersion
	}
	return nil
}

func (c *Clients) classify(ctx context.Context, err error) error {
	ce := &ConnectError{Context: c.Context, Server: c.Server, Err: err}
	var netErr net.Error
	var urlErr *url.Error
	switch {
	case apierrors.IsUnauthorized(err):
		ce.Reason, ce.Err, ce.Denied = "credentials refused (401 Unauthorized)", nil, true
	case apierrors.IsForbidden(err):
		ce.Reason, ce.Denied = "access forbidden", true
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		ce.Reason, ce.Err = fmt.Sprintf("cluster did not answer within %s", c.RequestTimeout), nil
	case errors.As(err, &urlErr):
		ce.Reason, ce.Err = "cannot reach cluster", urlErr.Err
	default:
		ce.Reason = "cluster check failed"
	}
	return ce
}

func kubeconfigPath(flags *ConfigFlags) string {
	if flags.KubeConfig != "" {
		return flags.KubeConfig
	}
	if env := os.Getenv("KUBECONFIG"); env != "" {
		return env
	}
	return clientcmd.RecommendedHomeFile
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
