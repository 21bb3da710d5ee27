package sim

import (
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
)

// What the simulated kubelet keeps of the main container's output, so that
// a demo's `l`, `p` and restart forensics have something to show: a start
// line of the bootstrap and execd, the user command's lines, and a last line
// when it ends; the previous instance's lines after a restart.

// LogLine is one line of a simulated container log.
type LogLine struct {
	At   time.Time
	Text string
}

// maxLoggedPods bounds the logs kept: the oldest Pod's are dropped first
// (a real node keeps logs of live containers only; the demo churns).
const maxLoggedPods = 4096

type podLog struct {
	uid               types.UID
	current, previous []LogLine
}

// podLogs is guarded by its own lock, never held while calling the API:
// a log read (a fake clientset reactor, which runs under the fake's lock)
// takes only this one, so it cannot wait on the simulation.
type podLogs struct {
	mu    sync.Mutex
	m     map[string]*podLog // namespace/name
	order []string           // insertion order, for the bound
}

// PodLog returns the lines of the main container of Pod namespace/name: the
// running (or last) instance's, or with previous the one before a restart.
// ok is false when the simulation knows no such container instance.
func (s *Sim) PodLog(namespace, name string, previous bool) (lines []LogLine, ok bool) {
	l := &s.logs
	l.mu.Lock()
	defer l.mu.Unlock()
	pl := l.m[key(namespace, name)]
	if pl == nil {
		return nil, false
	}
	if previous {
		return append([]LogLine(nil), pl.previous...), pl.previous != nil
	}
	return append([]LogLine(nil), pl.current...), true
}

// logf appends a line to the running instance of pod's main container.
func (s *Sim) logf(pod *corev1.Pod, format string, args ...any) {
	l := &s.logs
	l.mu.Lock()
	defer l.mu.Unlock()
	k := key(pod.Namespace, pod.Name)
	pl := l.m[k]
	if pl == nil || pl.uid != pod.UID { // a new Pod, perhaps under an old name
		if l.m == nil {
			l.m = map[string]*podLog{}
		}
		if pl == nil {
			l.order = append(l.order, k)
			for len(l.order) > maxLoggedPods {
				delete(l.m, l.order[0])
				l.order = l.order[1:]
			}
		}
		pl = &podLog{uid: pod.UID}
		l.m[k] = pl
	}
	pl.current = append(pl.current, LogLine{At: s.now, Text: fmt.Sprintf(format, args...)})
}

// logRestart makes the running instance's lines the previous ones.
func (s *Sim) logRestart(pod *corev1.Pod) {
	l := &s.logs
	l.mu.Lock()
	defer l.mu.Unlock()
	if pl := l.m[key(pod.Namespace, pod.Name)]; pl != nil && pl.uid == pod.UID {
		pl.previous, pl.current = pl.current, []LogLine{}
	}
}

// logStart writes what the main container prints when it starts: the
// bootstrap starting execd (when the template has the bootstrap), then the
// user command's first lines, which its scenario decides.
func (s *Sim) logStart(sb *sandbox, pod *corev1.Pod) {
	if len(pod.Spec.Containers) == 0 {
		return
	}
	main := pod.Spec.Containers[0]
	argv := append(append([]string(nil), main.Command...), main.Args...)
	cmd := strings.Join(argv, " ")
	if len(argv) > 0 && argv[0] == osv1.BootstrapPath {
		s.logf(pod, "bootstrap: starting execd on :44772")
		s.logf(pod, "execd: listening on 0.0.0.0:44772 (pid 7)")
		cmd = strings.Join(argv[1:], " ")
	}
	if cmd != "" {
		s.logf(pod, "bootstrap: exec %s", cmd)
	}
	scenario := Normal
	if sb != nil {
		scenario = sb.scenario
	}
	switch scenario {
	case InstantDeath:
		s.logf(pod, "bash: cannot set terminal process group (1): Inappropriate ioctl for device")
		s.logf(pod, "bash: no job control in this shell")
	case OOMKill:
		s.logf(pod, "trainer: loading dataset shard 3/8")
		s.logf(pod, "trainer: allocating 6.0GiB batch buffer (limit 4Gi)")
	case LivenessKill:
		s.logf(pod, "worker: serving /healthz on :8080")
		s.logf(pod, "worker: acquiring lock /workspace/.state.lock")
	case UnexplainedRestart:
		s.logf(pod, "agent: connected to coordinator 10.96.0.40:7000")
	default:
		s.logf(pod, "ready: waiting for work")
	}
}

// logEnd writes the main container's last line as it ends with exit/reason.
func (s *Sim) logEnd(pod *corev1.Pod, exit int32, reason string) {
	switch reason {
	case "OOMKilled":
		s.logf(pod, "trainer: step 412/1000 loss=0.8312")
	case "Completed":
		s.logf(pod, "exit")
	case "Error":
		if exit == 137 { // killed after a failed liveness probe
			s.logf(pod, "worker: still waiting for lock /workspace/.state.lock")
			return
		}
		s.logf(pod, "agent: coordinator closed the connection; exiting with status %d", exit)
	default:
		s.logf(pod, "received SIGTERM, exiting")
	}
}
