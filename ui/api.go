// Package ui is sandscope's terminal UI: a live, keyboard-driven view of the
// sandbox fleet built on bubbletea. It reads the fleet through Source and acts
// through Backend; it never talks to the API server itself (backend/ builds
// the real implementations from kube/ and actions/). The App keeps a stack of
// views and routes to the one on top through small interfaces (view.go): a
// keyOwner handles its own keys first, a chooser its Enter, a replier the
// async replies tagged with its id, a filterable or searchable its "/".
package ui

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	corev1 "k8s.io/api/core/v1"

	"github.com/sandscope/sandscope/internal/crash"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
	"github.com/sandscope/sandscope/ui/screen"
)

// Source is the live fleet: the latest immutable snapshot, and a channel that
// receives a (coalescable) signal whenever a newer snapshot exists. The cancel
// func ends the subscription. *kube.Watcher satisfies it via a tiny adapter.
type Source interface {
	Snapshot() *fleet.Snapshot
	Subscribe() (<-chan struct{}, func())
}

// CreateStage is one stage a create reached, as the footer shows it.
type CreateStage struct {
	Line   string
	Failed bool // the create failed at this stage (drawn as an error)
}

// CreateRequest is what the create form collects.
type CreateRequest struct {
	Namespace string
	Image     string
	Command   []string // empty = let the server decide (it must not silently fall back)
	Pool      string   // pooled create: the Pool to allocate from
	Env       map[string]string
	Lifetime  time.Duration // the sandbox's expiry; 0 = the default
	CPU       string        // Kubernetes quantities; "" = none
	Memory    string
}

// Backend is what the UI can ask for beyond the snapshot. Every field is
// optional: a nil func hides and disables the feature (the zero Backend gives a
// read-only browser). Funcs are called from tea.Cmds, never from Update, and
// must honour ctx. Errors that carry a refusal code (READ_ONLY, IP_TAKEN, ...)
// should implement `ErrorCode() string`; the UI shows the code prominently.
type Backend struct {
	// YAML of the sandbox object and of its Pod(s), as one document stream.
	YAML func(ctx context.Context, sb *model.Sandbox) (string, error)
	// Logs streams the main container's log (following) into w until ctx ends.
	Logs func(ctx context.Context, sb *model.Sandbox, opts LogOptions, w io.Writer) error
	// Events lists recent Events about the sandbox object and its Pods.
	Events func(ctx context.Context, sb *model.Sandbox) ([]corev1.Event, error)
	// Restarts explains the restarts and kills of the sandbox's Pods, the
	// verdicts the sweep gives them (inspect.Forensics: the node and the
	// sibling controls read too), so both read a Pod alike.
	Restarts func(ctx context.Context, sb *model.Sandbox) ([]model.Notice, error)
	// Delete deletes the sandbox object (after the UI's confirmation).
	Delete func(ctx context.Context, sb *model.Sandbox) error
	// ForceDelete deletes it and its Pods with no grace period (k9s's
	// kill); finalizers still hold the object.
	ForceDelete func(ctx context.Context, sb *model.Sandbox) error
	// Shell returns an interactive shell into the sandbox, run via tea.Exec.
	Shell func(sb *model.Sandbox) (tea.ExecCommand, error)
	// Exec runs one command to completion, writing its output to out.
	Exec func(ctx context.Context, sb *model.Sandbox, cmd []string, out io.Writer) (exitCode int, err error)
	// Forward opens a port-forward from 127.0.0.1:localPort (0: a free
	// port) to remotePort of the sandbox's Pod, identity-checked as exec,
	// and returns once the local port listens. The forward outlives ctx.
	Forward func(ctx context.Context, sb *model.Sandbox, localPort, remotePort int) (ForwardInfo, error)
	// Copy copies files to or from the sandbox, identity-checked as exec,
	// and returns a one-line summary of what was copied.
	Copy func(ctx context.Context, sb *model.Sandbox, req CopyRequest) (summary string, err error)
	// StopForward closes the forward listening on localAddr; its Done
	// closes once it has.
	StopForward func(localAddr string) error
	// Create creates a sandbox; stage is called with each stage line
	// (queued, scheduled, pulling image, ready, failed: reason).
	Create func(ctx context.Context, req CreateRequest, stage func(CreateStage)) (key string, err error)
	// SwitchNamespace and SwitchContext re-point the Source (":ns", ":ctx").
	// Without SwitchNamespace, ":ns" scopes the views locally. A
	// MultiSource's SwitchContext shows one context, or with name "" every
	// context it was started with (":ctx all").
	SwitchNamespace func(ns string) error
	SwitchContext   func(name string) error
	// Contexts lists kubeconfig contexts for ":ctx" completion.
	Contexts func() []string
	// ForContext is the backend of one context of a MultiSource: every
	// action on a sandbox (and a create) goes to the backend of the context
	// the sandbox was read from, with that cluster's clients and its own
	// fleet for the identity check, and the UI offers the actions the
	// first context's backend offers; this Backend's action funcs are then
	// never called. nil: this Backend acts for the one context there is.
	ForContext func(name string) Backend
}

// LogOptions select which log Backend.Logs streams and how.
type LogOptions struct {
	Previous   bool // the previous (terminated) instance of the container
	Timestamps bool // each line prefixed with the kubelet's RFC3339 timestamp
	// Container is the container to read ("" = the main one): an init
	// container (execd-installer) is the one to read when a Pod is stuck
	// in PodInitializing.
	Container string
	// Since is k9s's window: the lines of the last Since (>0), the whole
	// log from its head (<0), or the usual tail (0).
	Since time.Duration
}

// Options configure the UI.
type Options struct {
	ReadOnly bool
	Demo     bool
	// KeysFile overrides the key map path (default $XDG_CONFIG_HOME/sandscope/keys.yaml).
	KeysFile string
	// Now is the clock (tests pin it). Default time.Now.
	Now func() time.Time
	// DefaultNamespace is the namespace the create form starts with.
	DefaultNamespace string
	// Version is sandscope's version, shown in the header.
	Version string
	// Images are images the create form offers first (the demo's registry
	// knows these); the fleet's own images follow.
	Images []string
	// Favorites are the namespaces 1-9 switch to (0: every namespace); when
	// none are configured, the namespaces with the most sandboxes.
	Favorites []string
	// SaveDir is where ctrl+s writes a view's lines. Default
	// $XDG_STATE_HOME/sandscope when XDG_STATE_HOME is set, else the
	// current directory.
	SaveDir string
}

// Run opens the UI on the terminal and returns when the user quits or ctx ends.
func Run(ctx context.Context, src Source, be Backend, opts Options) error {
	if _, ok := os.LookupEnv("NO_COLOR"); ok {
		lipgloss.SetColorProfile(termenv.Ascii)
	}
	keys, keyErr := LoadKeyMap(opts.KeysFile)
	m := New(src, be, opts, keys)
	if keyErr != nil {
		m.flashErr(keyErr)
		m.flashSticky = true
	}
	in, err := screen.Keyboard()
	if err != nil {
		return fmt.Errorf("terminal UI: %w", err)
	}
	if in != os.Stdin {
		defer in.Close()
	}
	// The program draws through a screen, not bubbletea's renderer (see
	// package screen), so the terminal's modes and size, which bubbletea
	// handles only with its renderer, are set and followed here.
	scr := screen.New(os.Stdout, screen.Options{FullScreen: true, TTY: in})
	watch := func(p *tea.Program) func() { return screen.WatchSize(os.Stdout, p.Send) }
	// Signals end the program through ctx only (cli.MainAs turns each into
	// its cancellation): bubbletea's own handler, racing that cancellation,
	// blocks sending its QuitMsg to a loop that has stopped, and the
	// process hangs with the terminal still taken.
	return runOn(ctx, m, scr, watch, tea.WithInput(in), tea.WithMouseCellMotion(), tea.WithoutSignalHandler())
}

// runOn runs m on scr's terminal until the user quits or ctx ends; started
// is called with the program before it runs, and what it returns after.
func runOn(ctx context.Context, m *App, scr *screen.Screen, started func(*tea.Program) (stop func()), opts ...tea.ProgramOption) error {
	err := scr.TakeOver()
	defer scr.GiveBack() //nolint:errcheck // best effort: the program is over
	if err != nil {
		return fmt.Errorf("terminal UI: %w", err)
	}
	// A panic on any goroutine gives the terminal back before it is
	// reported (internal/crash); one in the model reaches cli.Main, not
	// bubbletea, whose report would print on the alternate screen.
	defer crash.OnPanic(func() { _ = scr.GiveBack() })()
	p := newProgram(m, scr, append(opts, tea.WithContext(ctx), tea.WithoutCatchPanics())...)
	if started != nil {
		defer started(p)()
	}
	_, err = p.Run()
	if err != nil && ctx.Err() != nil {
		return nil // cancelled by signal: a normal exit
	}
	if err != nil {
		return fmt.Errorf("terminal UI: %w", err)
	}
	return nil
}
