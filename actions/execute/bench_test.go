package execute_test

import (
	"context"
	"io"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandscope/sandscope/actions/execute"
)

// nopTransport answers at once, so a Run measures only the checks.
type nopTransport struct{}

func (nopTransport) Streams() bool { return true }
func (nopTransport) Exec(context.Context, execute.Dispatch) (execute.Outcome, error) {
	return execute.Outcome{}, nil
}

// BenchmarkCheckCost measures what identity checking adds to one exec on
// loopback: "before" is the check before dispatch (one live GET; plus one
// live LIST by status.podIP for execd-direct), "total" both checks (the
// after-check is one more GET, plus the LIST for execd-direct).
//
//	go test ./actions/execute -run '^$' -bench CheckCost -benchtime 300x
func BenchmarkCheckCost(b *testing.B) {
	e := newEnv(b, nil)
	e.running("bench")
	for _, via := range []execute.Via{execute.ViaKube, execute.ViaExecdDirect} {
		b.Run(string(via), func(b *testing.B) {
			x := e.executor(execute.Options{Transports: map[execute.Via]execute.Transport{via: nopTransport{}}})
			var before time.Duration
			b.ResetTimer()
			for b.Loop() {
				res, err := x.Run(context.Background(), execute.Request{Namespace: e.NS, Ref: "bench", Via: via,
					Command: []string{"true"}, Stdout: io.Discard})
				if err != nil {
					b.Fatal(err)
				}
				before += res.CheckTook
			}
			b.ReportMetric(float64(before.Microseconds())/float64(b.N)/1000, "before-ms/op")
		})
	}
}

// BenchmarkCheckFunction is the pure decision, without I/O.
func BenchmarkCheckFunction(b *testing.B) {
	in := execute.CheckInput{Target: execute.Target{Namespace: "ns", Pod: "a", UID: "u", IP: "10.0.0.1"},
		Via: execute.ViaExecdDirect, Address: "10.0.0.1", Live: benchPod(), Holders: []execute.Holder{{Namespace: "ns", Pod: "a", UID: "u"}}}
	for b.Loop() {
		if !execute.Check(in).OK() {
			b.Fatal("not OK")
		}
	}
}

func benchPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", UID: "u"},
		Spec:       corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{{Name: "sandbox"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1",
			ContainerStatuses: []corev1.ContainerStatus{{Name: "sandbox", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}},
	}
}
