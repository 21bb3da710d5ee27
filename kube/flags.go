package kube

import (
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ConfigFlags are kubectl's connection flags (--kubeconfig, --context,
// -n/--namespace, -s/--server, --token, --as, ...), bound and resolved by
// client-go's clientcmd, which is also what kubectl's own flags resolve
// through.
//
// Why not cli-runtime's genericclioptions.ConfigFlags: that package also
// holds kubectl's resource-builder flags, which import kustomize, which
// imports Go's plugin package. A binary that links plugin must keep every
// exported symbol and method for plugins to find, so the linker's dead-code
// elimination is off: the sandscope executable was 147 MB, and 73 MB of it
// stayed resident while watching a fleet.
type ConfigFlags struct {
	// KubeConfig is --kubeconfig; empty means $KUBECONFIG, then ~/.kube/config.
	KubeConfig string
	// Overrides are every other flag, as clientcmd applies them.
	Overrides clientcmd.ConfigOverrides
}

// NewConfigFlags returns flags with nothing set.
func NewConfigFlags() *ConfigFlags { return &ConfigFlags{} }

// AddFlags binds the flags with kubectl's names and shorthands.
func (f *ConfigFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.KubeConfig, clientcmd.RecommendedConfigPathFlag, f.KubeConfig, "Path to the kubeconfig file to use for CLI requests.")
	names := clientcmd.RecommendedConfigOverrideFlags("")
	names.ClusterOverrideFlags.APIServer.ShortName = "s" // as kubectl's -s
	clientcmd.BindOverrideFlags(&f.Overrides, fs, names)
}

// ToRawKubeConfigLoader returns the kubeconfig as the flags select it.
func (f *ConfigFlags) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.KubeConfig
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &f.Overrides)
}

// ToRESTConfig returns the client configuration the flags select.
func (f *ConfigFlags) ToRESTConfig() (*rest.Config, error) {
	return f.ToRawKubeConfigLoader().ClientConfig()
}

// Context is --context ("" = the kubeconfig's current context).
func (f *ConfigFlags) Context() string { return f.Overrides.CurrentContext }

// Namespace is -n/--namespace ("" = unset).
func (f *ConfigFlags) Namespace() string { return f.Overrides.Context.Namespace }

// WithContext copies the flags with --context set to name.
func (f *ConfigFlags) WithContext(name string) *ConfigFlags {
	out := *f
	out.Overrides.AuthInfo.ImpersonateGroups = append([]string(nil), f.Overrides.AuthInfo.ImpersonateGroups...)
	out.Overrides.CurrentContext = name
	return &out
}
