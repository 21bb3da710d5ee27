package create

import (
	"context"
	"fmt"
	"time"

	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/model"
)

// ExecProber is the production ReadyProber: it runs `true` through the
// identity-checked exec path (actions/execute), bound to the Pod UID and IP
// the create watched, so Ready is only reported for the Pod we created.
type ExecProber struct {
	Exec *execute.Executor
	// Via for OpenSandbox sandboxes (default execd: Ready means the exec
	// daemon answered). agent-sandbox has no daemon: always pods/exec.
	Via execute.Via
	// Timeout of one probe command (default 10s).
	Timeout time.Duration
}

// ProbeReady implements ReadyProber.
func (p *ExecProber) ProbeReady(ctx context.Context, t ProbeTarget) error {
	if t.Pod == nil {
		return fmt.Errorf("no pod to probe")
	}
	via := p.Via
	if via == "" {
		via = execute.ViaExecd
	}
	if t.Engine == model.EngineAgent {
		via = execute.ViaKube
	}
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	sb := &model.Sandbox{
		Key: string(t.Engine) + "/" + t.Namespace + "/" + t.Sandbox,
		// The sandbox just created has no cached source to share: its row
		// needs only the namespace and name to find and exec in its Pod.
		Meta: &model.ObjectMeta{Namespace: t.Namespace, Name: t.Sandbox},
		Slots: []model.Slot{{Index: 0, RecordedIP: t.Pod.Status.PodIP, PodName: t.Pod.Name,
			BoundUID: string(t.Pod.UID), Pod: model.SlimPod(t.Pod), Identity: model.IdentityOK}},
	}
	res, err := p.Exec.Run(ctx, execute.Request{Sandbox: sb, Command: []string{"true"}, Via: via, Timeout: timeout})
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("`true` returned exit code %d", res.ExitCode)
	}
	return nil
}
