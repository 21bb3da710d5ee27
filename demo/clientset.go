package demo

import (
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	fakecorev1 "k8s.io/client-go/kubernetes/typed/core/v1/fake"
	fakerest "k8s.io/client-go/rest/fake"
	k8stesting "k8s.io/client-go/testing"
)

// clientset is the demo's typed client: core/v1 and discovery over an
// in-memory object tracker, built as client-go's generated fake clientset
// (kubernetes/fake) builds them, without linking that package: its init
// registers every built-in API group into a scheme of its own, work done at
// every start of the binary, demo or not. The tracker uses client-go's
// ordinary scheme, which the real clients register anyway. sandscope reads
// and writes only core/v1; any other group answers with an error, never a
// panic.
type clientset struct {
	kubernetes.Interface // every group but core/v1: refused
	fake                 k8stesting.Fake
	tracker              k8stesting.ObjectTracker
	discovery            *fakediscovery.FakeDiscovery
}

// errNotSimulated answers a request to an API group the demo does not play.
var errNotSimulated = errors.New("the demo cluster serves only core/v1 and the sandbox engines' resources")

func newClientset() *clientset {
	c := &clientset{tracker: k8stesting.NewObjectTracker(scheme.Scheme, scheme.Codecs.UniversalDecoder())}
	c.Interface = kubernetes.New(&fakerest.RESTClient{NegotiatedSerializer: scheme.Codecs.WithoutConversion(), Err: errNotSimulated})
	c.discovery = &fakediscovery.FakeDiscovery{Fake: &c.fake}
	c.fake.AddReactor("*", "*", k8stesting.ObjectReaction(c.tracker))
	c.fake.AddWatchReactor("*", func(action k8stesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if wa, ok := action.(k8stesting.WatchActionImpl); ok {
			opts = wa.ListOptions
		}
		w, err := c.tracker.Watch(action.GetResource(), action.GetNamespace(), opts)
		if err != nil {
			return false, nil, err
		}
		return true, w, nil
	})
	return c
}

func (c *clientset) CoreV1() typedcorev1.CoreV1Interface {
	return &fakecorev1.FakeCoreV1{Fake: &c.fake}
}

func (c *clientset) Discovery() discovery.DiscoveryInterfaces { return c.discovery }

// IsWatchListSemanticsUnSupported tells informers to list, then watch: the
// tracker cannot stream a list's objects as watch events.
func (c *clientset) IsWatchListSemanticsUnSupported() bool { return true }
