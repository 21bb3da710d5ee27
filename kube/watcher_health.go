package kube

import (
	"context"
	"errors"
	"io"
	"net/http"
	"path"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// apiHealth follows the watcher's own HTTP traffic to the API server and
// answers two questions the fleet model needs: is the connection lost (and
// since when), and which resources the server denies it (forbidden, or not
// served at all).
//
// Every informer request (list, watch) goes through healthTransport, keyed
// by the last path segment ("pods", "batchsandboxes"). A key is failing from
// a transport error (or a broken watch stream, or a 5xx answer) until a
// later request for the same key gets an answer. The watcher's freshness
// probe (runProbe) has a key of its own, storageKey, which only a consistent
// read of the storage clears: an API server that answers but cannot read
// etcd keeps its watches open and silent, and only such a read tells. The
// connection counts as lost while any key fails. Recovery therefore means
// every broken informer has listed or watched again and the storage was
// read, not merely that the server answers a ping: until then its cache may
// miss changes, and a stale OK is what sandscope must never show.
type apiHealth struct {
	now     func() time.Time
	changed func() // called, without locks held, after the visible state changed

	mu          sync.Mutex
	failing     map[string]struct{}
	since       time.Time // when the connection was lost; zero while connected
	lastContact time.Time // last answer from the server
	// proven is when the last consistent read of the storage was sent
	// (its answer proves the data current as of then); zero until one
	// succeeds. proves says a probe is running, so that proven is AsOf.
	proven time.Time
	proves bool
	// connRefusedSince is the first connection refused (nothing listening
	// at the server's address) since the server last answered; zero once it
	// answers. A refused connection is an answer of the host, unlike
	// silence: the server is not there, rather than slow.
	connRefusedSince time.Time
	denied           map[string]denial
	// heard is when the last bytes came from the server (unix nanoseconds):
	// answers, and every read of a list or watch body.
	heard atomic.Int64
}

// silentFor reports whether nothing came from the server for d.
func (h *apiHealth) silentFor(d time.Duration) bool {
	return h.now().Sub(time.Unix(0, h.heard.Load())) >= d
}

func (h *apiHealth) hear() { h.heard.Store(h.now().UnixNano()) }

// denial is the server declining to serve a resource the watcher lists:
// forbidden, or not served at all.
type denial struct {
	message   string // forbiddenRequest's, or "list sandboxes: not served (CRD removed?)"
	forbidden bool   // 403; otherwise the resource is not served (404)
	// watchOnly: the server lists the resource but forbids watching it, so
	// only a watch it answers lifts the denial; the informer's lists,
	// which succeed between its failed watches, do not.
	watchOnly bool
}

func newAPIHealth(now func() time.Time, changed func()) *apiHealth {
	return &apiHealth{
		now:     now,
		changed: changed,
		failing: map[string]struct{}{},
		denied:  map[string]denial{},
	}
}

// fail records a transport-level failure of a request for key.
func (h *apiHealth) fail(key string) {
	h.mu.Lock()
	h.failing[key] = struct{}{}
	lost := h.since.IsZero() // the first failure while connected
	if lost {
		h.since = h.now()
	}
	h.mu.Unlock()
	if lost {
		h.changed()
	}
}

// answered records that the server answered a request for key (a watch
// or not) with status.
func (h *apiHealth) answered(key string, status int, watch bool) {
	h.hear()
	if status >= http.StatusInternalServerError {
		// A proxy or load balancer in front of a dead API server answers
		// 502/503/504; the API server itself answers 500 or 504 when it
		// cannot reach its storage. Either way the informer got no data.
		h.fail(key)
		return
	}
	h.mu.Lock()
	h.lastContact = h.now()
	h.connRefusedSince = time.Time{}
	recovered := h.clearLocked(key)
	r, wasDenied := h.denied[key]
	accepted := wasDenied && status >= 200 && status < 300 && (watch || !r.watchOnly)
	if accepted {
		delete(h.denied, key)
	}
	h.mu.Unlock()
	if recovered || accepted {
		h.changed()
	}
}

// clearLocked ends key's failure and reports whether that ended the loss
// of the connection. h.mu is held.
func (h *apiHealth) clearLocked(key string) bool {
	_, wasFailing := h.failing[key]
	delete(h.failing, key)
	recovered := wasFailing && len(h.failing) == 0
	if recovered {
		h.since = time.Time{}
	}
	return recovered
}

// noteTransportError records a refused connection among the transport
// errors.
func (h *apiHealth) noteTransportError(err error) {
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return
	}
	h.mu.Lock()
	if h.connRefusedSince.IsZero() {
		h.connRefusedSince = h.now()
	}
	h.mu.Unlock()
}

// contact records an answer that says nothing about any key (the freshness
// probe judges its own): the server is there.
func (h *apiHealth) contact() {
	h.hear()
	h.mu.Lock()
	h.connRefusedSince = time.Time{}
	h.mu.Unlock()
}

// connectionsRefusedSince reports since when connections have been refused
// with no answer in between.
func (h *apiHealth) connectionsRefusedSince() (time.Time, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.connRefusedSince, !h.connRefusedSince.IsZero()
}

// storageKey is the freshness probe's key: failing while the server's
// storage could not be read within the budget.
const storageKey = "storage (consistent read)"

// provenFresh records a consistent read sent at sent that the server
// answered: the data was current then.
func (h *apiHealth) provenFresh(sent time.Time) {
	h.hear()
	h.mu.Lock()
	h.lastContact = h.now()
	h.connRefusedSince = time.Time{}
	if sent.After(h.proven) {
		h.proven = sent
	}
	recovered := h.clearLocked(storageKey)
	h.mu.Unlock()
	if recovered {
		h.changed()
	}
}

// deny records that the server will not serve key (forbidden, not
// found); the message is shown as is.
func (h *apiHealth) deny(key string, r denial) {
	h.mu.Lock()
	old, ok := h.denied[key]
	h.denied[key] = r
	h.mu.Unlock()
	if !ok || old != r {
		h.changed()
	}
}

// isDenied says whether key is currently denied (its informer will not
// sync, and the fleet must not wait for it).
func (h *apiHealth) isDenied(key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.denied[key]
	return ok
}

type healthState struct {
	disconnectedSince *time.Time
	lastContact       time.Time
	proven            time.Time // see apiHealth.proven
	proves            bool
	forbidden         []string // sorted messages of 403 denials
	unavailable       []string // sorted messages of resources not served
}

func (h *apiHealth) state() healthState {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := healthState{lastContact: h.lastContact, proven: h.proven, proves: h.proves}
	if !h.since.IsZero() {
		since := h.since
		st.disconnectedSince = &since
	}
	for _, r := range h.denied {
		if r.forbidden {
			st.forbidden = append(st.forbidden, r.message)
		} else {
			st.unavailable = append(st.unavailable, r.message)
		}
	}
	sort.Strings(st.forbidden)
	sort.Strings(st.unavailable)
	return st
}

func (h *apiHealth) connected() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.since.IsZero()
}

// wrap is a transport.WrapperFunc for rest.Config.Wrap.
func (h *apiHealth) wrap(next http.RoundTripper) http.RoundTripper {
	return &healthTransport{next: next, health: h}
}

type healthTransport struct {
	next   http.RoundTripper
	health *apiHealth
}

// probeRequest marks the context of the freshness probe's requests: the
// probe judges their outcome itself (only a 2xx within the budget proves
// anything), so the transport only notes that the server sent something.
type probeRequest struct{}

func asProbe(ctx context.Context) context.Context {
	return context.WithValue(ctx, probeRequest{}, true)
}

func (t *healthTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Context().Value(probeRequest{}) != nil {
		resp, err := t.next.RoundTrip(req)
		if err == nil {
			t.health.contact()
		} else if req.Context().Err() == nil {
			t.health.noteTransportError(err)
		}
		return resp, err
	}
	key := path.Base(req.URL.Path)
	watch := req.URL.Query().Get("watch") == "true"
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		// A request we canceled ourselves (shutdown, a stopped watch) says
		// nothing about the server.
		if req.Context().Err() == nil {
			t.health.noteTransportError(err)
			t.health.fail(key)
		}
		return resp, err
	}
	t.health.answered(key, resp.StatusCode, watch)
	switch {
	case resp.StatusCode/100 != 2:
	case watch:
		resp.Body = &watchBody{ReadCloser: resp.Body, req: req, key: key, health: t.health}
	default:
		resp.Body = &heardBody{ReadCloser: resp.Body, health: t.health}
	}
	return resp, nil
}

// watchBody notices a watch stream that breaks (server killed, connection
// reset) before the informer tries again, so the loss shows at once. A clean
// end (EOF: the server's watch timeout, a graceful shutdown) is not a failure;
// the informer's next request tells.
type watchBody struct {
	io.ReadCloser
	req    *http.Request
	key    string
	health *apiHealth
	closed atomic.Bool
}

func (b *watchBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.health.hear()
	}
	if err != nil && err != io.EOF && !b.closed.Load() && b.req.Context().Err() == nil {
		b.health.fail(b.key)
	}
	return n, err
}

func (b *watchBody) Close() error {
	// The informer stops watches by closing the body; the Read that this
	// interrupts must not count as a broken connection.
	b.closed.Store(true)
	return b.ReadCloser.Close()
}

// heardBody notes that the server is still sending while a long answer (a
// large list) streams: a busy server is not a frozen one.
type heardBody struct {
	io.ReadCloser
	health *apiHealth
}

func (b *heardBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.health.hear()
	}
	return n, err
}
