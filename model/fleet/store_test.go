package fleet

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/modeltest"
)

func TestFleetAsKnownObjects(t *testing.T) {
	f := New(Options{})
	pod := func(ns, name string) *model.Pod {
		p := &model.Pod{}
		p.Namespace, p.Name = ns, name
		p.UID = types.UID("uid-" + name)
		return p
	}
	a, b := pod("ns1", "a"), pod("ns2", "b")
	f.UpsertPod(a)
	f.UpsertPod(b)
	bs := &model.BatchSandbox{}
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
	owned.OwnerReferences = []model.OwnerReference{{Kind: "BatchSandbox", Name: "ghost"}}
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

// A Pod's only link is kept in its entry, two or more, and the links of a
// Pod the Fleet does not have, in the index; links move between the two as
// sandboxes link and unlink the Pod and as it comes and goes.
func TestPodLinksMoveBetweenEntryAndIndex(t *testing.T) {
	f, _ := newSyncedFleet(t)
	key := nn(ns, "p")
	check := func(step string, want ...string) {
		t.Helper()
		var got []string
		for e := range f.linksOf(key) {
			got = append(got, e.name())
		}
		if !slices.Equal(got, want) || f.hasLinks(key) != (len(want) > 0) {
			t.Fatalf("%s: links %q, want %q", step, got, want)
		}
		pe := f.pods[key]
		if _, lone := f.podLinks.Lone(key); pe != nil && (lone || pe.link != nil && f.podLinks.Has(key)) {
			t.Fatalf("%s: the only link of an existing Pod is in the index", step)
		}
		if pe == nil && f.podLinks.Has(key) != (len(want) > 0) {
			t.Fatalf("%s: the index does not have the links of a Pod the Fleet does not have", step)
		}
	}
	pod := modeltest.RunningPod("p", "u1", "10.0.0.5")
	f.UpsertBatchSandbox(pooledSandbox("a", ft0, []string{"p"}, "10.0.0.5"))
	check("linked before the Pod exists", "a")
	f.UpsertPod(model.SlimPod(pod))
	if pe := f.pods[key]; pe.link == nil || pe.link.name() != "a" || f.podLinks.Keys() != 0 {
		t.Fatal("the Pod's only link is not in its entry")
	}
	check("the Pod arrived", "a")
	f.UpsertBatchSandbox(pooledSandbox("b", ft0.Add(time.Second), []string{"p"}, "10.0.0.5"))
	check("a second sandbox", "a", "b")
	f.UpsertBatchSandbox(pooledSandbox("a", ft0, []string{"other"}, "10.0.0.6"))
	check("the first one let go", "b")
	f.DeletePod(model.SlimPod(pod))
	check("the Pod deleted", "b")
	f.UpsertPod(model.SlimPod(pod))
	check("the Pod back", "b")
	f.DeleteBatchSandbox(ns, "b")
	check("the sandbox deleted: the Pod is its own sandbox again", "p")
	f.DeletePod(model.SlimPod(pod))
	check("the Pod deleted again")
	if n := f.podLinks.Keys(); n != 1 { // "other", which sandbox a still claims
		t.Errorf("the index has %d keys, want 1", n)
	}
}

// sandboxAt finds what a lookup by model.SandboxKey finds, for keys that
// fit its stack buffer and keys that do not.
func TestSandboxAtMatchesSandboxKey(t *testing.T) {
	t.Parallel()
	f := New(Options{})
	long := strings.Repeat("n", 200)
	for _, name := range []string{"sb", long} {
		e := &sbEntry{key: model.SandboxKey(model.EngineBatchSandbox, "ns", name)}
		f.sandboxes[e.key] = e
		if got := f.sandboxAt(model.EngineBatchSandbox, "ns", name); got != e {
			t.Errorf("sandboxAt(%d-byte name) = %p, want %p", len(name), got, e)
		}
		if got := f.sandboxAt(model.EngineAgent, "ns", name); got != nil {
			t.Errorf("another engine's sandbox of that name was found")
		}
		if got := f.sandboxAt(model.EngineBatchSandbox, "ns2", name); got != nil {
			t.Errorf("another namespace's sandbox of that name was found")
		}
	}
}
