package create_test

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/sandscope/sandscope/actions/create"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/imageconfig"
)

// A create asks the server which engines it serves once, through
// Clients.Sources (which takes the discovery the connection started, when
// there is one): --template chose the engine and then read the template's
// resource from a discovery each.
func TestCreateDiscoversTheEnginesOnce(t *testing.T) {
	c := testcluster.Get(t)
	ns := c.Namespace(t)
	var groups atomic.Int32 // GET /apis: one per discovery of the engines
	cfg := rest.CopyConfig(c.Config)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.URL.Path == "/apis" {
				groups.Add(1)
			}
			return rt.RoundTrip(r)
		})
	}
	clients, err := kube.NewClients(cfg, ns)
	if err != nil {
		t.Fatal(err)
	}
	creator := &create.Creator{Clients: clients, Prober: &fakeProber{}, ProbeInterval: 50 * time.Millisecond,
		Images: imageconfig.New(imageconfig.Options{Timeout: time.Second})}
	_, err = creator.Run(testcluster.Context(t), create.Request{Template: "no-such-template"}, nil)
	var ce *create.Error
	if !errors.As(err, &ce) || ce.Created() {
		t.Fatalf("create --template of a missing template: %v, want an error before creating", err)
	}
	if n := groups.Load(); n != 1 {
		t.Errorf("the create discovered the API groups %d times, want 1", n)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
