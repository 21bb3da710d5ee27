package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/imageconfig"
	"github.com/sandscope/sandscope/ui"
)

// The image checks (ENTRYPOINT_NOT_RUN in the TUI and in sweep) read the
// configs of images the tenants chose, from registries the tenants chose,
// without anyone asking: the operator decides whether they run, whether
// they carry the operator's registry credentials, and to which hosts.
const (
	imageChecksOn        = "on"
	imageChecksOff       = "off"
	imageChecksAnonymous = "anonymous"
)

// fileConfig is $XDG_CONFIG_HOME/sandscope/config.yaml; flags win over it.
type fileConfig struct {
	ImageChecks     string   `json:"imageChecks,omitempty"`
	ImageRegistries []string `json:"imageRegistries,omitempty"`
	// Favorites are the namespaces the TUI's 1-9 switch to (0 is all).
	Favorites []string `json:"favorites,omitempty"`
}

// ConfigPath is where the config file lives: beside the key map,
// $XDG_CONFIG_HOME/sandscope/config.yaml (fallback ~/.config).
func ConfigPath() string {
	keys := ui.KeysPath()
	if keys == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(keys), "config.yaml")
}

// applyConfigFile fills the settings the command line left unset from the
// config file (a missing file is no error; a malformed one is).
func applyConfigFile(cmd *cobra.Command, g *Globals) error {
	path := g.ConfigFile
	if path == "" {
		path = ConfigPath()
	}
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && g.ConfigFile == "" {
		return nil
	}
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	var fc fileConfig
	if err := yaml.UnmarshalStrict(data, &fc); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	flags := cmd.Flags()
	if fc.ImageChecks != "" && !flags.Changed("image-checks") {
		// YAML reads an unquoted on or off as a boolean, which reaches the
		// string field as "true" or "false": those are what was meant.
		switch strings.ToLower(strings.TrimSpace(fc.ImageChecks)) {
		case "true":
			fc.ImageChecks = imageChecksOn
		case "false":
			fc.ImageChecks = imageChecksOff
		case "", imageChecksOn, imageChecksOff, imageChecksAnonymous:
		default:
			return fmt.Errorf("config file %s: imageChecks must be on, off or anonymous, not %q", path, fc.ImageChecks)
		}
		g.ImageChecks = fc.ImageChecks
	}
	if len(fc.ImageRegistries) > 0 && !flags.Changed("image-registries") {
		g.ImageRegistries = fc.ImageRegistries
	}
	if len(fc.Favorites) > 9 {
		return fmt.Errorf("config file %s: favorites: at most 9 namespaces (keys 1-9), got %d", path, len(fc.Favorites))
	}
	g.Favorites = fc.Favorites
	return nil
}

// imageCheckMode is --image-checks as it applies: --readonly turns "on"
// into "anonymous" (a read-only session sends no credentials anywhere).
func (g *Globals) imageCheckMode() (string, error) {
	switch m := strings.ToLower(strings.TrimSpace(g.ImageChecks)); m {
	case "", imageChecksOn:
		if g.ReadOnly {
			return imageChecksAnonymous, nil
		}
		return imageChecksOn, nil
	case imageChecksOff, imageChecksAnonymous:
		return m, nil
	default:
		return "", fmt.Errorf("--image-checks must be on, off or anonymous, not %q", g.ImageChecks)
	}
}

// imageChecks returns the reader for the background image checks, or nil
// when they are off.
func (g *Globals) imageChecks(opts imageconfig.Options) (kube.ImageConfigReader, error) {
	mode, err := g.imageCheckMode()
	if err != nil || mode == imageChecksOff {
		return nil, err
	}
	opts.Anonymous = mode == imageChecksAnonymous
	opts.Registries = g.ImageRegistries
	return imageconfig.New(opts), nil
}
