// Package execute runs identity-checked commands in sandbox Pods: it proves,
// immediately before it sends anything, that the target is still the Pod it
// means (name, UID and IP together, read live from the API server), and
// again right after, and refuses otherwise with a *refusal.Error a program
// can act on (a dead sandbox's IP went to a new Pod and commands ran in a
// stranger's container).
//
// API for the UI (and the CLI):
//
//	x := execute.New(execute.Options{
//		Cluster:    clients,                    // *kube.Clients: live reads
//		Snapshot:   watcher.Snapshot,           // latest fleet snapshot
//		Transports: execute.DefaultTransports(clients, token, 0),
//		ReadOnly:   g.ReadOnly,                 // refused here, code READ_ONLY
//	})
//
//	// `x`: one-shot, streamed into out; exit code when it ran.
//	res, err := x.Run(ctx, execute.Request{Sandbox: sb, Command: []string{"sh", "-c", line},
//		Stdout: out, Stderr: out, Via: execute.ViaKube})
//	// err is a *refusal.Error (errors.As): Code (IP_TAKEN, POD_GONE, ...), Executed
//	// ("no" | "unknown"), Retryable, Evidence; ErrorCode() for the UI.
//
//	// `s`: interactive shell (bash, then sh; ShellOptions.Shell to configure),
//	// a tea.ExecCommand: tea.Exec(x.Shell(ctx, sb, execute.ShellOptions{}), done)
//
//	// `F`: a port-forward, the same check before the tunnel opens, re-checked
//	// while it is open (Options.Forwarder: *kube.Clients).
//	f, err := x.Forward(ctx, execute.ForwardRequest{Sandbox: sb, RemotePort: 44772})
//	defer f.Close() // f.Done() closes, with f.Err(), when the Pod changed
//
// Check is the single check every surface shares; Transport is the seam
// for the demo's simulated transport. Never retry a command whose error
// says Executed "unknown".
package execute
