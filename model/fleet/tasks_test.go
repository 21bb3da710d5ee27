package fleet

import (
	"slices"
	"strings"
	"testing"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/modeltest"
)

// A pooled sandbox whose task template runs the user's command keeps its
// container alive by design: no ENTRYPOINT_NOT_RUN (and no image read);
// failed tasks are TASK_FAILED with the counts.
func TestPooledTaskSandbox(t *testing.T) {
	f, _ := newSyncedFleet(t)
	b := pooledSandbox("task", ft0, []string{"pool-a-x1"}, "10.0.0.9")
	b.SetTask(true, []string{"python", "-m", "eval"}, model.TaskCounts{Running: 1, Succeed: 4, Failed: 2})
	f.UpsertBatchSandbox(b)
	f.UpsertPod(model.SlimPod(modeltest.RunningPod("pool-a-x1", "ux1", "10.0.0.9", modeltest.PooledIn("pool-a"), modeltest.WithCommand(osv1.BootstrapPath, "tail", "-f", "/dev/null"))))
	if got := f.PendingImageChecks(); len(got) != 0 {
		t.Errorf("image config requested for a task sandbox: %q", got)
	}
	sb := mustSandbox(t, f, bsKey("task"))
	if hasNotice(sb, model.CodeEntrypointNotRun) != nil || hasNotice(sb, model.CodeImageConfigUnreadable) != nil {
		t.Errorf("keep-alive flagged on a sandbox whose task runs the command: %v", noticeCodes(sb))
	}
	n := hasNotice(sb, model.CodeTaskFailed)
	if n == nil || n.Severity != model.SeverityWarning || !strings.Contains(n.Message, "2 task(s) failed (running 1, succeeded 4, failed 2, pending 0, unknown 0)") {
		t.Fatalf("TASK_FAILED: %+v (notices %v)", n, noticeCodes(sb))
	}
	if !slices.ContainsFunc(n.Evidence, func(e model.Evidence) bool {
		return e.Kind == model.Observed && strings.Contains(e.Text, `spec.taskTemplate process: ["python", "-m", "eval"]`)
	}) {
		t.Errorf("evidence %+v", n.Evidence)
	}

	// Without a task the same keep-alive Pod still asks for its image config.
	f.UpsertBatchSandbox(pooledSandbox("task", ft0, []string{"pool-a-x1"}, "10.0.0.9"))
	if got := f.PendingImageChecks(); !slices.Equal(got, []string{"python:3.12"}) {
		t.Errorf("pending image checks %q, want python:3.12", got)
	}
	if sb := mustSandbox(t, f, bsKey("task")); hasNotice(sb, model.CodeTaskFailed) != nil {
		t.Errorf("TASK_FAILED without failed tasks: %v", noticeCodes(sb))
	}
}
