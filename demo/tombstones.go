package demo

import (
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"
)

// tombstones gives the in-memory trackers what a real API server's watch
// cache has and client-go's ObjectTracker lacks: deletions. An informer
// lists, then watches from the list's resourceVersion; the API server
// replays every change after that version, deletions included. The tracker
// replays objects added or changed since then but forgets a deleted object
// at once, so a Pod deleted between a reflector's list and its watch stayed
// in the informer's store for ever, a live Pod to sandscope, still holding
// an address the simulated CNI had already given to the next Pod.
//
// The tracker does not bump its resourceVersion on a delete, so a deletion
// is recorded with the version read just after it: a watch from that
// version or older is told of the deletion. A client whose list was taken
// after the delete may be told too, of an object it never had: informers
// ignore the deletion of an unknown key, and a key held by a live object
// now is never reported (its object is replayed as added instead).
//
// Every write the deletions must be ordered with goes through one fake's
// reactors, which run under that fake's lock; mu guards the log itself.
type tombstones struct {
	tracker k8stesting.ObjectTracker

	mu   sync.Mutex
	kind map[schema.GroupVersionResource]schema.GroupVersionKind // learnt from lists
	log  map[schema.GroupVersionResource][]tombstone
	// expired is, per resource, the newest version whose deletions were
	// dropped from log: a watch from it or older is answered 410 Gone, as a
	// real server answers a version out of its watch cache, and relists.
	expired map[schema.GroupVersionResource]int64
}

type tombstone struct {
	version int64
	obj     runtime.Object
}

// maxTombstones bounds the log per resource: a list-to-watch gap lasts
// milliseconds, a long demo deletes without end.
const maxTombstones = 1024

// probeNamespace holds no object: listing it reads the tracker's current
// resourceVersion without copying any.
const probeNamespace = "\x00resource-version-probe"

func newTombstones(tracker k8stesting.ObjectTracker) *tombstones {
	return &tombstones{tracker: tracker, kind: map[schema.GroupVersionResource]schema.GroupVersionKind{},
		log: map[schema.GroupVersionResource][]tombstone{}, expired: map[schema.GroupVersionResource]int64{}}
}

// install puts the reactors on fake, in front of its object reactor; the
// fake's watches must replay through t.
func (t *tombstones) install(fake *k8stesting.Fake) *tombstones {
	fake.PrependReactor("list", "*", t.learnKind)
	fake.PrependReactor("delete", "*", t.delete)
	return t
}

// learnKind remembers the list kind of each resource (the tracker needs it
// to list, and a delete does not carry it); it never handles the list.
func (t *tombstones) learnKind(action k8stesting.Action) (bool, runtime.Object, error) {
	if l, ok := action.(k8stesting.ListActionImpl); ok {
		t.mu.Lock()
		t.kind[l.GetResource()] = l.GetKind()
		t.mu.Unlock()
	}
	return false, nil, nil
}

// delete deletes through the tracker and records the deleted object.
func (t *tombstones) delete(action k8stesting.Action) (bool, runtime.Object, error) {
	del, ok := action.(k8stesting.DeleteActionImpl)
	if !ok {
		return false, nil, nil
	}
	gvr, ns, name := del.GetResource(), del.GetNamespace(), del.GetName()
	old, err := t.tracker.Get(gvr, ns, name)
	if err != nil {
		return false, nil, nil // the object reactor answers (NotFound)
	}
	if err := t.tracker.Delete(gvr, ns, name, del.DeleteOptions); err != nil {
		return true, nil, err
	}
	t.record(gvr, old)
	return true, nil, nil
}

func (t *tombstones) record(gvr schema.GroupVersionResource, obj runtime.Object) {
	t.mu.Lock()
	gvk, known := t.kind[gvr]
	t.mu.Unlock()
	if !known {
		return // never listed: no reflector is between a list and a watch of it
	}
	list, err := t.tracker.List(gvr, gvk, probeNamespace)
	if err != nil {
		return
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return
	}
	v, err := strconv.ParseInt(lm.GetResourceVersion(), 10, 64)
	if err != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	log := append(t.log[gvr], tombstone{version: v, obj: obj})
	if n := len(log) - maxTombstones; n > 0 {
		t.expired[gvr] = log[n-1].version
		log = append(log[:0:0], log[n:]...)
	}
	t.log[gvr] = log
}

// replay tells w, a watch of gvr in ns (all when "") from opts'
// resourceVersion, of the objects deleted since. It fails with 410 Gone
// when deletions since then were already dropped.
func (t *tombstones) replay(w watch.Interface, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) error {
	if opts.ResourceVersion == "" || opts.ResourceVersion == "0" {
		return nil // from now: nothing to replay
	}
	from, err := strconv.ParseInt(opts.ResourceVersion, 10, 64)
	if err != nil {
		return nil // the tracker's Watch refused it already
	}
	fw, ok := w.(*watch.RaceFreeFakeWatcher)
	if !ok {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if exp, ok := t.expired[gvr]; ok && from <= exp {
		return apierrors.NewResourceExpired("too old resource version: " + opts.ResourceVersion)
	}
	for _, ts := range t.log[gvr] {
		if ts.version < from {
			continue
		}
		m, err := meta.Accessor(ts.obj)
		if err != nil || (ns != "" && m.GetNamespace() != ns) {
			continue
		}
		if _, err := t.tracker.Get(gvr, m.GetNamespace(), m.GetName()); err == nil {
			continue // the name is held again: its object is replayed as added
		}
		fw.Delete(ts.obj.DeepCopyObject())
	}
	return nil
}
