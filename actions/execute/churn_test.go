package execute_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/internal/syncbuf"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/execd"
	"github.com/sandscope/sandscope/kube/execd/execdtest"
)

// churnPod is the ground truth about one Pod incarnation.
type churnPod struct {
	pod    *corev1.Pod
	daemon *execdtest.Server
	born   time.Time // Running with its IP and its execd listening
	died   time.Time // zero while alive; set before anything is torn down
}

type churnWorld struct {
	mu    sync.Mutex
	byUID map[types.UID]*churnPod
}

// aliveThroughout: the Pod was Running at its IP, with its execd, for the
// whole attempt; refusing it was a false refusal.
func (w *churnWorld) aliveThroughout(uid string, from, to time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.byUID[types.UID(uid)]
	return p != nil && !p.born.IsZero() && p.born.Before(from) && (p.died.IsZero() || p.died.After(to))
}

var identityRE = regexp.MustCompile(`execd pod=\S+/(\S+) uid=(\S+)`)

// TestExecChurn: thousands of kill / IP reuse / same-name re-creation cycles
// while execs run concurrently against the live fleet model (a real Watcher
// on the namespace), via execd-direct to real loopback daemons. No command
// may be reported as run (executed "yes") unless it ran in the Pod meant;
// the false-refusal rate is logged. SANDSCOPE_CHURN_CYCLES overrides the
// cycle count (default 2000; 200 with -short).
func TestExecChurn(t *testing.T) {
	cycles := 2000
	if testing.Short() {
		cycles = 200
	}
	if s := os.Getenv("SANDSCOPE_CHURN_CYCLES"); s != "" {
		cycles, _ = strconv.Atoi(s)
	}
	e := newEnv(t, nil)
	cs := e.C.Kube.CoreV1().Pods(e.NS)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	w := kube.NewWatcher(e.clients, kube.WatcherOptions{Namespace: e.NS})
	go w.Run(ctx) //nolint:errcheck // returns when ctx ends
	sctx, scancel := context.WithTimeout(ctx, 30*time.Second)
	defer scancel()
	if err := w.WaitForSync(sctx); err != nil {
		t.Fatal(err)
	}
	world := &churnWorld{byUID: map[types.UID]*churnPod{}}

	const slots, churners, workers = 12, 3, 4
	ips := make(chan string, slots*2)
	for range slots * 2 {
		ips <- testcluster.PodIP()
	}
	var seq atomic.Int64
	spawn := func(name, ip string) (*churnPod, error) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"opensandbox.io/id": name}},
			Spec:       corev1.PodSpec{NodeName: e.Node.Name, Containers: []corev1.Container{{Name: "sandbox", Image: "x"}}},
		}
		created, err := cs.Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("create %s: %w", name, err)
		}
		now := metav1.Now()
		created.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}, StartTime: &now,
			ContainerStatuses: []corev1.ContainerStatus{{Name: "sandbox", Ready: true,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}}
		running, err := cs.UpdateStatus(ctx, created, metav1.UpdateOptions{})
		if err != nil {
			return nil, fmt.Errorf("running %s: %w", name, err)
		}
		var d *execdtest.Server
		for try := 0; ; try++ { // the previous holder's listener may still be closing
			d, err = execdtest.Start(execdtest.Config{Addr: net.JoinHostPort(ip, strconv.Itoa(execd.DefaultPort)),
				Identity: fmt.Sprintf("pod=%s/%s uid=%s", e.NS, name, running.UID)})
			if err == nil || try == 50 {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		if err != nil {
			return nil, err
		}
		cp := &churnPod{pod: running, daemon: d, born: time.Now()}
		world.mu.Lock()
		world.byUID[running.UID] = cp
		world.mu.Unlock()
		return cp, nil
	}
	kill := func(cp *churnPod) error {
		world.mu.Lock()
		cp.died = time.Now()
		world.mu.Unlock()
		p := cp.pod.DeepCopy()
		p.Status.Phase = corev1.PodFailed
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error"}}
		if _, err := cs.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("kill %s: %w", p.Name, err)
		}
		cp.daemon.Close()
		return nil
	}
	zero := int64(0)
	remove := func(cp *churnPod) error {
		err := cs.Delete(ctx, cp.pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero,
			Preconditions: &metav1.Preconditions{UID: &cp.pod.UID}})
		if err != nil {
			return fmt.Errorf("delete %s: %w", cp.pod.Name, err)
		}
		return nil
	}

	// Start the fleet.
	current := make([]*churnPod, slots)
	for i := range current {
		cp, err := spawn(fmt.Sprintf("sb-%d", seq.Add(1)), <-ips)
		if err != nil {
			t.Fatal(err)
		}
		current[i] = cp
	}

	// Exec workers: pick a sandbox as the model knows it, run, judge.
	var attempts, ok, refusals, falseRefusals, unknown, wrong atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	x := execute.New(execute.Options{Cluster: e.clients, Snapshot: w.Fleet().Snapshot,
		Transports: execute.DefaultTransports(e.clients, "", 0)})
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				snap := w.Fleet().Snapshot()
				if len(snap.Sandboxes()) == 0 {
					continue
				}
				sb := snap.Sandboxes()[rand.IntN(len(snap.Sandboxes()))]
				slot := sb.PrimarySlot()
				if slot == nil {
					continue
				}
				var out syncbuf.Buffer
				from := time.Now()
				res, err := x.Run(ctx, execute.Request{Sandbox: sb, Via: execute.ViaExecdDirect,
					Command: []string{"echo", "target=" + slot.BoundUID}, Stdout: &out, Stderr: &out})
				to := time.Now()
				attempts.Add(1)
				var ee *refusal.Error
				switch {
				case err == nil:
					ok.Add(1)
					m := identityRE.FindStringSubmatch(out.String())
					if m == nil || m[2] != res.Target.UID {
						wrong.Add(1)
						t.Errorf("command reported as run landed elsewhere: target %+v, output %q", res.Target, out.String())
					}
				case errors.As(err, &ee) && ee.Executed == refusal.ExecutedNo:
					refusals.Add(1)
					if world.aliveThroughout(slot.BoundUID, from, to) {
						falseRefusals.Add(1)
						if falseRefusals.Load() <= 5 {
							t.Logf("false refusal of %s: %s", sb.Key, ee.JSON())
						}
					}
				case errors.As(err, &ee):
					unknown.Add(1)
				default:
					t.Errorf("not an *refusal.Error: %v", err)
				}
			}
		}()
	}

	// Churners: each owns slots i%churners==k.
	start := time.Now()
	var churnErr atomic.Value
	var cyclesDone atomic.Int64
	var cwg sync.WaitGroup
	for k := range churners {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			rng := rand.New(rand.NewPCG(uint64(k), 7))
			var graveyard []*churnPod
			for cyclesDone.Load() < int64(cycles) {
				i := k + churners*rng.IntN(slots/churners)
				old := current[i]
				if err := kill(old); err != nil {
					churnErr.Store(err)
					return
				}
				ip := old.pod.Status.PodIP
				reuse := rng.IntN(3) != 0 // mostly: the next Pod gets the same IP
				if !reuse {
					ips <- ip
					ip = <-ips
				}
				name := fmt.Sprintf("sb-%d", seq.Add(1))
				if rng.IntN(2) == 0 { // same-name re-creation
					if err := remove(old); err != nil {
						churnErr.Store(err)
						return
					}
					name = old.pod.Name
				} else {
					graveyard = append(graveyard, old) // a dead sandbox still advertising its IP
				}
				cp, err := spawn(name, ip)
				if err != nil {
					churnErr.Store(err)
					return
				}
				current[i] = cp
				if len(graveyard) > 4 {
					if err := remove(graveyard[0]); err != nil {
						churnErr.Store(err)
						return
					}
					graveyard = graveyard[1:]
				}
				cyclesDone.Add(1)
			}
		}()
	}
	cwg.Wait()
	close(stop)
	wg.Wait()
	if err, _ := churnErr.Load().(error); err != nil {
		t.Fatal(err)
	}
	for _, cp := range current {
		cp.daemon.Close()
	}

	// Commands that landed in a daemon of another Pod than the one meant
	// (they can only have been reported as executed "unknown").
	elsewhere := 0
	world.mu.Lock()
	for _, cp := range world.byUID {
		elsewhere += landedElsewhere(cp)
	}
	world.mu.Unlock()

	n := attempts.Load()
	rate := 0.0
	if n > 0 {
		rate = 100 * float64(falseRefusals.Load()) / float64(n)
	}
	t.Logf("churn: %d cycles in %v; %d execs: %d ran in the right Pod, %d refused (%d false refusals = %.2f%% of execs), %d unknown, %d reported-run in a wrong Pod; %d landed elsewhere but were reported unknown",
		cyclesDone.Load(), time.Since(start).Round(time.Millisecond), n, ok.Load(), refusals.Load(), falseRefusals.Load(), rate, unknown.Load(), wrong.Load(), elsewhere)
	if wrong.Load() != 0 {
		t.Fatalf("%d commands were reported as run but ran in another Pod", wrong.Load())
	}
	if n < int64(cycles)/10 || ok.Load() == 0 || refusals.Load() == 0 {
		t.Fatalf("the churn did not exercise both paths: %d execs, %d ok, %d refused", n, ok.Load(), refusals.Load())
	}
}

// landedElsewhere counts the commands this daemon received that were meant
// for another Pod (each command names its target UID).
func landedElsewhere(cp *churnPod) int {
	n := 0
	for _, c := range cp.daemon.Seen() {
		if !strings.Contains(c, "target="+string(cp.pod.UID)) {
			n++
		}
	}
	return n
}
