package forensics

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandscope/sandscope/model"
)

// RecreatedNotice runs for every slot of every derivation: a Pod created
// with its sandbox costs it no allocation, and a late one still gets its
// notice with the evidence pointing at the right times.
func TestRecreatedNoticeAllocatesOnlyANotice(t *testing.T) {
	ready := t0.Add(3 * time.Second)
	fresh := &model.Slot{Pod: slimPodCreated("p-0", at(1))}
	if allocs := testing.AllocsPerRun(100, func() {
		if _, ok := RecreatedNotice(t0, &ready, fresh); ok {
			t.Fatal("POD_RECREATED for a Pod created with its sandbox")
		}
	}); allocs != 0 {
		t.Errorf("%v allocations for no notice, want 0", allocs)
	}
	late := &model.Slot{Pod: slimPodCreated("p-0", at(3600))}
	n, ok := RecreatedNotice(t0, &ready, late)
	if !ok || n.Code != model.CodePodRecreated || n.Pod != "p-0" {
		t.Fatalf("late Pod: %+v, %v", n, ok)
	}
	if len(n.Evidence) < 3 || !n.Evidence[0].At.Equal(t0) || !n.Evidence[1].At.Equal(t0.Add(time.Hour)) || n.Evidence[2].At != &ready {
		t.Errorf("evidence times: %+v", n.Evidence)
	}
}

func slimPodCreated(name string, created metav1.Time) *model.Pod {
	return model.SlimPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: created}})
}
