package execute_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/actions/refusal"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/syncbuf"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/execd"
	"github.com/sandscope/sandscope/model/fleet"
)

// poolOwners is the ground truth of which sandbox each pool Pod serves.
type poolOwners struct {
	mu      sync.Mutex
	owner   map[string]string    // pod -> sandbox it was handed to last
	handed  map[string]time.Time // pod -> when
	sandbox map[string]string    // sandbox -> its pod
}

func (o *poolOwners) hand(pod, sb string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.owner[pod], o.handed[pod], o.sandbox[sb] = sb, time.Now(), pod
}

// ownedSince: sb was the pod's owner from at least t on (a handover after t
// falls in the check-to-dispatch window, which is detected, not prevented).
func (o *poolOwners) lostBefore(sb string, t time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	pod := o.sandbox[sb]
	return o.owner[pod] != sb && o.handed[pod].Before(t)
}

// TestExecChurnPools: a Pool hands its Pods from sandbox to sandbox while
// the older sandboxes' alloc-status still list them (the engine's known
// bug), half of the handovers also relabelling the Pod, and some Pods
// answer execd with a redirect to a thief. Concurrent one-shot execs
// (targeted reads, as the CLI) must never run a command for a sandbox in
// a Pod it had already lost, and the thief must receive nothing.
func TestExecChurnPools(t *testing.T) {
	handovers := 60
	if testing.Short() {
		handovers = 30
	}
	e := newEnv(t, nil)
	ct := e.C.Controller(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var stolen atomic.Int64
	thief := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { stolen.Add(1) })}
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go thief.Serve(tl) //nolint:errcheck // closed below
	defer thief.Close()

	const pods = 6
	truth := &poolOwners{owner: map[string]string{}, handed: map[string]time.Time{}, sandbox: map[string]string{}}
	var names []string
	var namesMu sync.Mutex
	seq := 0
	newSandbox := func(pod, ip string) {
		seq++
		name := fmt.Sprintf("pooled-%d", seq)
		ct.PooledSandbox(e.NS, name, "warm", ip, pod)
		truth.hand(pod, name)
		namesMu.Lock()
		names = append(names, name)
		namesMu.Unlock()
	}
	ips := map[string]string{}
	for i := range pods {
		pod, ip := fmt.Sprintf("warm-%d", i), testcluster.PodIP()
		ips[pod] = ip
		if i%3 == 2 {
			// A hostile daemon: every request is redirected to the thief.
			e.Kubelet.CreatePod(e.NS, testcluster.PoolPod(pod, "warm"))
			e.Kubelet.Schedule(e.NS, pod, e.Node.Name)
			e.Kubelet.SetRunning(e.NS, pod, ip)
			hl, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(execd.DefaultPort)))
			if err != nil {
				t.Fatal(err)
			}
			hostile := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "http://"+tl.Addr().String()+r.URL.Path, http.StatusTemporaryRedirect)
			})}
			go hostile.Serve(hl) //nolint:errcheck // closed below
			defer hostile.Close()
		} else {
			e.startPod(testcluster.PoolPod(pod, "warm"), ip)
		}
		newSandbox(pod, ip)
	}

	x := execute.New(execute.Options{Cluster: e.clients, Transports: execute.DefaultTransports(e.clients, "", 0),
		Lookup: func(ctx context.Context, ns, ref string) (*fleet.Snapshot, error) {
			return e.clients.LookupSandbox(ctx, ref, kube.LookupOptions{Namespace: ns})
		}})
	var attempts, ran, refused, redirected, unknown, wrong atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for k := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(k), 11))
			for {
				select {
				case <-stop:
					return
				default:
				}
				namesMu.Lock()
				sb := names[rng.IntN(len(names))]
				namesMu.Unlock()
				via := []execute.Via{execute.ViaExecdDirect, execute.ViaKube}[rng.IntN(2)]
				from := time.Now()
				_, err := x.Run(ctx, execute.Request{Namespace: e.NS, Ref: sb, Via: via, Command: []string{"echo", "for=" + sb}, Stdout: &syncbuf.Buffer{}})
				attempts.Add(1)
				var ee *refusal.Error
				switch {
				case err == nil:
					ran.Add(1)
					if truth.lostBefore(sb, from) {
						wrong.Add(1)
						t.Errorf("ran for %s in a Pod it had lost before the exec began", sb)
					}
				case errors.As(err, &ee) && ee.Executed == refusal.ExecutedNo:
					refused.Add(1)
					if ee.Code == execute.CodeRedirected {
						redirected.Add(1)
					}
				case errors.As(err, &ee):
					unknown.Add(1)
				default:
					t.Errorf("not an *refusal.Error: %v", err)
				}
			}
		}()
	}

	// Round robin, so that one Pod is handed on at most about once a second
	// (creation times have whole seconds; the model holds a Pod claimed by
	// two sandboxes created in the same second for neither). Even Pods are
	// labelled with their owner at each handover, as newer pool controllers
	// do; odd ones never are, as older ones.
	start := time.Now()
	for i := range handovers {
		n := i % pods
		pod := fmt.Sprintf("warm-%d", n)
		newSandbox(pod, ips[pod])
		if n%2 == 0 {
			truth.mu.Lock()
			owner := truth.owner[pod]
			truth.mu.Unlock()
			ct.LabelPod(e.NS, pod, map[string]string{osv1.LabelBatchSandboxName: owner})
		}
		time.Sleep(200 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	t.Logf("pool churn: %d handovers in %v; %d execs: %d ran, %d refused (%d redirects), %d unknown, %d ran for a sandbox that had lost its Pod; thief received %d",
		handovers, time.Since(start).Round(time.Millisecond), attempts.Load(), ran.Load(), refused.Load(), redirected.Load(), unknown.Load(), wrong.Load(), stolen.Load())
	if n := stolen.Load(); n != 0 {
		t.Fatalf("the redirect target received %d requests", n)
	}
	if wrong.Load() != 0 {
		t.Fatalf("%d commands ran for a sandbox in a Pod it had already lost", wrong.Load())
	}
	if ran.Load() == 0 || refused.Load() == 0 || redirected.Load() == 0 {
		t.Fatalf("the churn did not exercise every path: %d ran, %d refused, %d redirected", ran.Load(), refused.Load(), redirected.Load())
	}
}
