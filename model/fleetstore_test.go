package model

import (
	"slices"
	"testing"
	"unsafe"

	"k8s.io/apimachinery/pkg/types"
)

func TestFleetAsKnownObjects(t *testing.T) {
	f := NewFleet(FleetOptions{})
	pod := func(ns, name string) *Pod {
		p := &Pod{}
		p.Namespace, p.Name = ns, name
		p.UID = types.UID("uid-" + name)
		return p
	}
	a, b := pod("ns1", "a"), pod("ns2", "b")
	f.UpsertPod(a)
	f.UpsertPod(b)
	bs := &BatchSandbox{}
	bs.Namespace, bs.Name = "ns1", "sb"
	f.UpsertBatchSandbox(bs)

	keys := f.PodKeys()
	slices.Sort(keys)
	if want := []string{"ns1/a", "ns2/b"}; !slices.Equal(keys, want) {
		t.Fatalf("PodKeys = %q, want %q", keys, want)
	}
	if got, ok := f.PodByKey("ns2/b"); !ok || got != b {
		t.Fatalf("PodByKey(ns2/b) = %v, %v; want the Pod handed in", got, ok)
	}
	f.DeletePod(a)
	if _, ok := f.PodByKey("ns1/a"); ok {
		t.Fatal("PodByKey finds a deleted Pod")
	}
	if keys := f.PodKeys(); !slices.Equal(keys, []string{"ns2/b"}) {
		t.Fatalf("PodKeys after delete = %q", keys)
	}

	// A Pod owned by a BatchSandbox that is not there yet makes no
	// BatchSandbox key: only objects handed in count.
	owned := pod("ns1", "ghost-0")
	owned.OwnerReferences = []OwnerReference{{Kind: "BatchSandbox", Name: "ghost"}}
	f.UpsertPod(owned)
	if keys := f.BatchSandboxKeys(); !slices.Equal(keys, []string{"ns1/sb"}) {
		t.Fatalf("BatchSandboxKeys = %q, want [ns1/sb]", keys)
	}
	if got, ok := f.BatchSandboxByKey("ns1/sb"); !ok || got != bs {
		t.Fatalf("BatchSandboxByKey(ns1/sb) = %v, %v", got, ok)
	}
	for _, key := range []string{"ns1/ghost", "sb", "ns2/sb"} {
		if _, ok := f.BatchSandboxByKey(key); ok {
			t.Errorf("BatchSandboxByKey(%q) found one", key)
		}
	}
	f.DeleteBatchSandbox("ns1", "sb")
	if keys := f.BatchSandboxKeys(); len(keys) != 0 {
		t.Fatalf("BatchSandboxKeys after delete = %q", keys)
	}
}

// A Pod that arrives after the sandbox linking it reuses the key string the
// sandbox made for it (the link index's key), so the Pod map and the index
// share one copy.
func TestPodEntrySharesLinkedKey(t *testing.T) {
	f, _ := newSyncedFleet(t)
	f.UpsertBatchSandbox(batchSandbox("sb", "10.0.0.1"))
	f.UpsertPod(SlimPod(runningPod("sb-0", "uid-1", "10.0.0.1", ownedBy("sb", 0))))
	key := nn(ns, "sb-0")
	var linkKey, podKey string
	for k := range f.podLinks.one {
		if k == key {
			linkKey = k
		}
	}
	for k := range f.pods {
		if k == key {
			podKey = k
		}
	}
	if linkKey == "" || podKey == "" {
		t.Fatalf("link index key %q, pod map key %q; want both %q", linkKey, podKey, key)
	}
	if unsafe.StringData(linkKey) != unsafe.StringData(podKey) {
		t.Error("the Pod map and the link index keep separate copies of the Pod's key")
	}
}
