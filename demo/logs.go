package demo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	restclient "k8s.io/client-go/rest"
	fakerest "k8s.io/client-go/rest/fake"

	"github.com/sandscope/sandscope/demo/sim"
)

// logsClientset is the demo's clientset with Pod logs served from the
// simulation, as a kubelet would serve them: the main container's lines
// (with their timestamps if asked, the last tailLines of them), the
// previous instance's with previous, the kubelet's refusal when there is no
// such instance. Everything else is the fake's.
type logsClientset struct {
	kubernetes.Interface
	sim *sim.Sim
}

// IsWatchListSemanticsUnSupported forwards the fake's answer: informers ask
// the client whether it can stream lists, and the fake cannot.
func (c *logsClientset) IsWatchListSemanticsUnSupported() bool {
	u, ok := c.Interface.(interface{ IsWatchListSemanticsUnSupported() bool })
	return ok && u.IsWatchListSemanticsUnSupported()
}

func (c *logsClientset) CoreV1() typedcorev1.CoreV1Interface {
	return logsCore{CoreV1Interface: c.Interface.CoreV1(), sim: c.sim}
}

type logsCore struct {
	typedcorev1.CoreV1Interface
	sim *sim.Sim
}

func (c logsCore) Pods(namespace string) typedcorev1.PodInterface {
	return logsPods{PodInterface: c.CoreV1Interface.Pods(namespace), ns: namespace, sim: c.sim}
}

type logsPods struct {
	typedcorev1.PodInterface
	ns  string
	sim *sim.Sim
}

func (p logsPods) GetLogs(name string, opts *corev1.PodLogOptions) *restclient.Request {
	if opts == nil {
		opts = &corev1.PodLogOptions{}
	}
	body, status := podLog(p.sim, p.ns, name, opts)
	c := &fakerest.RESTClient{
		Client: fakerest.CreateHTTPClient(func(*http.Request) (*http.Response, error) {
			h := http.Header{}
			if status != http.StatusOK {
				h.Set("Content-Type", "application/json")
			}
			return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(bytes.NewReader(body))}, nil
		}),
		NegotiatedSerializer: scheme.Codecs.WithoutConversion(),
		GroupVersion:         corev1.SchemeGroupVersion,
		VersionedAPIPath:     fmt.Sprintf("/api/v1/namespaces/%s/pods/%s/log", p.ns, name),
	}
	return c.Request()
}

// podLog renders the log read as the API server returns it: the text, or
// a Status with the kubelet's refusal.
func podLog(s *sim.Sim, ns, name string, opts *corev1.PodLogOptions) ([]byte, int) {
	lines, ok := s.PodLog(ns, name, opts.Previous)
	if !ok {
		msg := fmt.Sprintf("container %q in pod %q is waiting to start: ContainerCreating", opts.Container, name)
		if opts.Previous {
			msg = fmt.Sprintf("previous terminated container %q in pod %q not found", opts.Container, name)
		}
		st := apierrors.NewBadRequest(msg).ErrStatus
		st.APIVersion, st.Kind = "v1", "Status"
		b, _ := json.Marshal(st) //nolint:errchkjson // a Status always marshals
		return b, http.StatusBadRequest
	}
	// The window (the TUI's 1-6 keys) is the simulation's clock's, which
	// stamps the lines; the tail is of what the window keeps, as the
	// kubelet's.
	var from time.Time
	switch {
	case opts.SinceTime != nil:
		from = opts.SinceTime.Time
	case opts.SinceSeconds != nil:
		from = s.Now().Add(-time.Duration(*opts.SinceSeconds) * time.Second)
	}
	if !from.IsZero() {
		lines = slices.DeleteFunc(slices.Clone(lines), func(l sim.LogLine) bool { return l.At.Before(from) })
	}
	if opts.TailLines != nil && int64(len(lines)) > *opts.TailLines {
		lines = lines[int64(len(lines))-*opts.TailLines:]
	}
	var b []byte
	for _, l := range lines {
		if opts.Timestamps {
			b = l.At.UTC().AppendFormat(b, time.RFC3339Nano)
			b = append(b, ' ')
		}
		b = append(b, l.Text...)
		b = append(b, '\n')
	}
	return b, http.StatusOK
}
