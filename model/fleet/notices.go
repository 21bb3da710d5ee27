package fleet

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/model"
)

// keepAliveOnly reports whether a main container runs the engine bootstrap
// followed by nothing but a keep-alive, i.e. the image's own ENTRYPOINT/CMD is
// never started. It returns a description of the keep-alive ("" for none).
func keepAliveOnly(c *model.Container) (bool, string) {
	if c == nil || len(c.Command) == 0 || c.Command[0] != osv1.BootstrapPath {
		return false, ""
	}
	var room [8]string // the usual command fits: no allocation per derive
	rest := append(append(room[:0], c.Command[1:]...), c.Args...)
	if len(rest) == 0 {
		return true, "no user command"
	}
	if isKeepAlive(rest) {
		return true, strings.Join(rest, " ")
	}
	// sh -c "tail -f /dev/null" and the like.
	if len(rest) == 3 && (path.Base(rest[0]) == "sh" || path.Base(rest[0]) == "bash") && rest[1] == "-c" {
		if f := strings.Fields(rest[2]); len(f) > 0 && isKeepAlive(f) {
			return true, strings.Join(rest, " ")
		}
	}
	return false, ""
}

func isKeepAlive(argv []string) bool {
	if len(argv) > 0 && (path.Base(argv[0]) == "exec") {
		argv = argv[1:]
	}
	if len(argv) == 0 {
		return false
	}
	switch path.Base(argv[0]) {
	case "tail":
		return len(argv) == 3 && argv[1] == "-f" && argv[2] == "/dev/null"
	case "sleep":
		return len(argv) == 2 && (argv[1] == "infinity" || argv[1] == "inf")
	}
	return false
}

// imageKey is the key an image config is read and cached under: the digest
// reference from containerStatuses.imageID when present (runtime prefixes
// such as docker-pullable:// stripped), else the image reference of the spec.
func imageKey(spec *model.Container, st *model.ContainerStatus) string {
	if st != nil && st.ImageID != "" {
		id := st.ImageID
		if i := strings.Index(id, "://"); i >= 0 {
			id = id[i+3:]
		}
		if strings.Contains(id, "@") {
			return id
		}
	}
	if spec != nil && spec.Image != "" {
		return spec.Image
	}
	if st != nil {
		return st.Image
	}
	return ""
}

// entrypointNotice compares a keep-alive main container with its image config.
func entrypointNotice(podName string, c *model.Container, keepAlive, key string, cfg *model.ImageConfig) *model.Notice {
	if cfg == nil {
		return nil
	}
	cmd := "[" + strings.Join(c.Command, " ") + "]"
	if cfg.Err != "" {
		// A warning, not info: a keep-alive sandbox whose image config cannot
		// be read may be one whose image service never started, and the
		// failed read is the only trace of it (a fleet once had 46 such creates succeed, started with sleep).
		return &model.Notice{Code: model.CodeImageConfigUnreadable, Severity: model.SeverityWarning, Pod: podName,
			Message: "image config unreadable: " + cfg.Err,
			Evidence: []model.Evidence{{Kind: model.Observed, Text: "main container command " + cmd + " (" + keepAlive + ")"},
				{Kind: model.Observed, Text: "reading the config of " + key + " failed: " + cfg.Err}}}
	}
	if len(cfg.Entrypoint) == 0 && len(cfg.Cmd) == 0 {
		return nil
	}
	img := "ENTRYPOINT " + quoteList(cfg.Entrypoint) + " CMD " + quoteList(cfg.Cmd)
	return &model.Notice{Code: model.CodeEntrypointNotRun, Severity: model.SeverityWarning, Pod: podName,
		Message: "the image's " + img + " never runs: the container starts bootstrap.sh + " + keepAlive,
		Evidence: []model.Evidence{{Kind: model.Observed, Text: "main container command " + cmd},
			{Kind: model.Observed, Text: "image " + key + " config: " + img},
			{Kind: model.Inferred, Text: "Kubernetes replaces the image ENTRYPOINT when command is set"}}}
}

func quoteList(ss []string) string {
	if len(ss) == 0 {
		return "[]"
	}
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// execReadyNotice is NOT_EXEC_READY, from status only (the actions package
// adds the live /ping probe). The rule: a Pod that is Running and not deleting
// shows no sign its exec daemon answers when
//   - its main container is not ready, or the Pod's Ready condition is not True, or
//   - it is an OpenSandbox Pod whose main command does not start with
//     bootstrap.sh (execd is started by bootstrap.sh; without it nothing listens).
func execReadyNotice(engine model.Engine, p *model.Pod) *model.Notice {
	if p == nil || p.DeletionTimestamp != nil || !podRunning(p) {
		return nil
	}
	spec, st := p.Main()
	var why []model.Evidence
	if st != nil && !st.Ready {
		why = append(why, model.Evidence{Kind: model.Observed, Text: "main container " + st.Name + " ready=false"})
	}
	if rs, ok := podReadyCondition(p); ok && rs != corev1.ConditionTrue {
		why = append(why, model.Evidence{Kind: model.Observed, Text: "Pod condition Ready=" + string(rs)})
	}
	if engine == model.EngineBatchSandbox && spec != nil && len(spec.Command) > 0 && spec.Command[0] != osv1.BootstrapPath {
		why = append(why, model.Evidence{Kind: model.Observed, Text: "main command " + strconv.Quote(spec.Command[0]) + " is not " + osv1.BootstrapPath},
			model.Evidence{Kind: model.Inferred, Text: "execd is started by bootstrap.sh, so nothing listens on :44772"})
	}
	if len(why) == 0 {
		return nil
	}
	return &model.Notice{Code: model.CodeNotExecReady, Severity: model.SeverityWarning, Pod: p.Name,
		Message: "Pod " + p.Name + " is Running but there is no sign its exec daemon answers", Evidence: why}
}

// restartNotices surfaces restarts with the last termination reason and exit
// code (the sweep's forensics classify them). It also returns the total count.
func restartNotices(p *model.Pod) ([]model.Notice, int32) {
	if p == nil {
		return nil, 0
	}
	var out []model.Notice
	var total int32
	for i := range p.Status.ContainerStatuses {
		st := &p.Status.ContainerStatuses[i]
		total += st.RestartCount
		if st.RestartCount == 0 {
			continue
		}
		msg := "container " + st.Name + " restarted " + strconv.Itoa(int(st.RestartCount)) + "×"
		ev := []model.Evidence{{Kind: model.Observed, Text: "restartCount " + strconv.Itoa(int(st.RestartCount))}}
		if t := st.LastTerminationState.Terminated; t != nil {
			msg += "; last: " + textsafe.OrDash(t.Reason) + ", exit code " + strconv.Itoa(int(t.ExitCode))
			var at *time.Time
			if !t.FinishedAt.IsZero() {
				at = &t.FinishedAt.Time
				msg += " at " + t.FinishedAt.UTC().Format(time.DateTime)
			}
			ev = append(ev, model.Evidence{Kind: model.Observed, Text: "lastState.terminated reason " + textsafe.OrDash(t.Reason) + " exitCode " + strconv.Itoa(int(t.ExitCode)), At: at})
		}
		out = append(out, model.Notice{Code: model.CodeRestarted, Severity: model.SeverityWarning, Pod: p.Name, Message: msg, Evidence: ev})
	}
	return out, total
}

// orphanLiveNotice is STATE_MISMATCH for a Pod that names a deleted
// sandbox and is not being deleted: the sandbox is gone, yet its Pod lives
// on (the garbage collector has not taken it, or it is named by a label
// only), holding its node's resources and answering on its address.
func orphanLiveNotice(e *sbEntry, p *model.Pod) model.Notice {
	kind := engineKind(e.engine())
	return model.Notice{Code: model.CodeStateMismatch, Severity: model.SeverityWarning, Pod: p.Name,
		Message: fmt.Sprintf("its %s %s is deleted but Pod %s is still %s and not being deleted", kind, e.name(), p.Name, textsafe.OrDash(string(p.Status.Phase))),
		Evidence: []model.Evidence{
			{Kind: model.Observed, Text: kind + " " + e.ns() + "/" + e.name() + " not found; the Pod names it as its owner"},
			{Kind: model.Observed, Text: "pod " + p.Name + " phase " + textsafe.OrDash(string(p.Status.Phase)) + ", no deletionTimestamp"},
		}}
}

// expiryNotice is EXPIRING_SOON when expire is within `within` of now (or
// past). next is when it will appear or change, zero when it never will.
func expiryNotice(field string, expire *time.Time, created, now time.Time, within time.Duration) (*model.Notice, time.Time) {
	if expire == nil {
		return nil, time.Time{}
	}
	if !created.IsZero() && expire.After(created) {
		// A short-lived sandbox (a five-minute lifetime) would be "expiring
		// soon" from birth; it is so in the last half of its life at most.
		within = min(within, expire.Sub(created)/2)
	}
	from := expire.Add(-within)
	if now.Before(from) {
		return nil, from
	}
	msg := "expires at " + expire.UTC().Format(time.DateTime)
	var next time.Time
	if now.Before(*expire) {
		next = *expire // the message changes once it has expired
	} else {
		msg = "expired at " + expire.UTC().Format(time.DateTime) + " and still exists"
	}
	// The evidence's time is when the field was read, as for every other
	// observation; the expiry itself is in its text.
	seen := now
	return &model.Notice{Code: model.CodeExpiringSoon, Severity: model.SeverityInfo, Message: msg,
		Evidence: []model.Evidence{{Kind: model.Observed, Text: field + " " + expire.UTC().Format(time.RFC3339), At: &seen}}}, next
}

// taskNotice is TASK_FAILED: the engine counts failed tasks of the
// sandbox's task template (status.taskFailed > 0).
func taskNotice(b *model.BatchSandbox) *model.Notice {
	t := b.Task()
	if t == nil || t.Counts.Failed <= 0 {
		return nil
	}
	c := t.Counts
	ev := []model.Evidence{{Kind: model.Observed, Text: fmt.Sprintf("status.taskFailed %d (taskRunning %d, taskSucceed %d, taskPending %d, taskUnknown %d)",
		c.Failed, c.Running, c.Succeed, c.Pending, c.Unknown)}}
	if len(t.Command) > 0 {
		ev = append(ev, model.Evidence{Kind: model.Observed, Text: "spec.taskTemplate process: " + quoteList(t.Command)})
	}
	return &model.Notice{Code: model.CodeTaskFailed, Severity: model.SeverityWarning,
		Message: fmt.Sprintf("%d task(s) failed (running %d, succeeded %d, failed %d, pending %d, unknown %d)",
			c.Failed, c.Running, c.Succeed, c.Failed, c.Pending, c.Unknown),
		Evidence: ev}
}

// taskRunsCommand: the sandbox's task template runs a command of its own,
// so a keep-alive main container is by design (the pool template keeps the
// container alive; the task executor runs the user's command in it) and
// the image's ENTRYPOINT not running is no finding.
func taskRunsCommand(b *model.BatchSandbox) bool {
	t := b.Task()
	return t != nil && t.HasTemplate && len(t.Command) > 0
}
