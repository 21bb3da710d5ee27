// Package wiregen is a loopback load generator for sandscope's scale
// benchmarks: an HTTPS server that answers exactly the requests sandscope's
// watcher makes at start-up (discovery, the watch-lists of Pods,
// BatchSandboxes and the other sandbox resources, the freshness probe), in
// the wire formats a real kube-apiserver uses for them: Pods as protobuf
// watch frames, the custom resources as JSON watch events, gzip when the
// client asks for it.
//
// The fleet is demo/sim's Load fleet (sim.LoadObjects), built object by
// object while it streams, so the generator never holds it: 150,000
// sandboxes, beyond what this machine's API server can hold, cost the
// generator a few MB. What only a server sets (defaults, managedFields) is
// copied from objects a real API server stored (testdata, rewritten by
// test/bench's TestCaptureWiregenTemplates).
//
// It is test-only code: nothing outside test/ imports it.
package wiregen

import (
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"embed"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/sandscope/sandscope/demo/sim"
)

//go:embed testdata/*.json
var testdata embed.FS

// Options configure a generator.
type Options struct {
	// Load is the fleet served: N, Namespace, Seed and DeadEvery as for
	// sim.Load, so that a real API server loaded with the same options holds
	// the same objects.
	Load sim.LoadOptions
	// Now is the time the objects' statuses and timestamps carry. Default:
	// when the generator starts.
	Now time.Time
	// Chunk and Gap model a busy server: after every Chunk objects of an
	// initial list the stream is flushed and pauses for Gap. Zero: no pauses.
	Chunk int
	Gap   time.Duration
	// Precompute encodes and gzips the initial lists of Pods and
	// BatchSandboxes once, at Start, and serves those bytes to clients that
	// ask for gzip: about a tenth of the encoded size held in memory (some
	// 200 MB at 150,000), so that on a machine of two shared cores the
	// generator's own encoding (about 0.5 ms of CPU per sandbox) is not in
	// the client's start-up. The bytes are those of the streamed lists, in
	// gzip members of about 256 KB of events (a gzip stream may hold several).
	Precompute bool
}

// Server is a running generator.
type Server struct {
	opts   Options
	srv    *httptest.Server
	tmpl   templates
	kinds  map[string]string // "group/version/resource" -> kind
	rv     atomic.Int64      // the last resourceVersion handed out
	stall  stallGate
	live   broadcast
	logMu  sync.Mutex
	reqLog []string
	pre    map[string][][]byte // resource -> its initial list, gzip members (Precompute)
	// unknown counts requests the generator does not serve (answered 404).
	unknown atomic.Int64
}

// Start starts a generator on a loopback HTTPS port (HTTP/2, like a real
// API server).
func Start(opts Options) (*Server, error) {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	if opts.Load.Namespace == "" {
		opts.Load.Namespace = "bench"
	}
	if opts.Load.DeadEvery == 0 {
		opts.Load.DeadEvery = 100
	}
	tmpl, err := loadTemplates()
	if err != nil {
		return nil, err
	}
	kinds, err := loadKinds()
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, tmpl: tmpl, kinds: kinds}
	s.rv.Store(int64(1000 + 2*opts.Load.N + 10))
	s.stall.init()
	s.live.init()
	if opts.Precompute {
		s.pre = map[string][][]byte{}
		for name, st := range map[string]stream{"pods": podStream{s}, "batchsandboxes": batchSandboxStream{s}} {
			if s.pre[name], err = precompute(st, opts.Load.N); err != nil {
				return nil, err
			}
		}
	}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.EnableHTTP2 = true
	s.srv.StartTLS()
	return s, nil
}

// Close stops the server and ends every open watch.
func (s *Server) Close() {
	s.stall.set(false)
	s.live.close()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// URL is the server's https://127.0.0.1:PORT.
func (s *Server) URL() string { return s.srv.URL }

// CAData is the PEM of the certificate clients must trust.
func (s *Server) CAData() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})
}

// Config is a client config for the generator.
func (s *Server) Config() *rest.Config {
	return &rest.Config{Host: s.URL(), TLSClientConfig: rest.TLSClientConfig{CAData: s.CAData()}}
}

// Namespace is the namespace the fleet is in.
func (s *Server) Namespace() string { return s.opts.Load.Namespace }

// N is the number of sandboxes served.
func (s *Server) N() int { return s.opts.Load.N }

// Stall makes the generator stop answering (true): new requests wait, open
// streams stop writing, until Stall(false).
func (s *Server) Stall(on bool) { s.stall.set(on) }

// Requests is what the generator was asked, one "METHOD PATH?QUERY accept=..." per request.
func (s *Server) Requests() []string {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return append([]string(nil), s.reqLog...)
}

// Unknown is the number of requests the generator answered 404 because it
// does not serve them.
func (s *Server) Unknown() int64 { return s.unknown.Load() }

// SetRestarts sends sandbox i's Pod, its first container restarted
// restarts times, to every open Pod watch as a MODIFIED event: the status
// write of the event-to-screen measurement, without an API server's write.
func (s *Server) SetRestarts(i int, restarts int32) {
	pod := s.pod(i)
	if len(pod.Status.ContainerStatuses) > 0 {
		pod.Status.ContainerStatuses[0].RestartCount = restarts
	}
	pod.ResourceVersion = strconv.FormatInt(s.rv.Add(1), 10)
	s.live.send(podFrame("MODIFIED", pod))
}

func (s *Server) log(r *http.Request) {
	line := r.Method + " " + r.URL.RequestURI() + " accept=" + r.Header.Get("Accept")
	s.logMu.Lock()
	s.reqLog = append(s.reqLog, line)
	s.logMu.Unlock()
}

// serve routes one request.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.log(r)
	if !s.stall.wait(r.Context()) {
		return
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch path {
	case "/version":
		s.file(w, "version.json", "application/json")
		return
	case "/api", "/apis":
		s.file(w, strings.TrimPrefix(path, "/")+".json", aggregatedDiscovery)
		return
	}
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	var group, version string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		version, parts = parts[1], parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		group, version, parts = parts[1], parts[2], parts[3:]
	default:
		s.notFound(w, r)
		return
	}
	if len(parts) == 0 {
		s.file(w, group+"_"+version+".json", "application/json")
		return
	}
	ns := ""
	if len(parts) >= 2 && parts[0] == "namespaces" {
		ns, parts = parts[1], parts[2:]
	}
	if len(parts) != 1 || r.Method != http.MethodGet {
		s.notFound(w, r)
		return
	}
	resource := parts[0]
	q := r.URL.Query()
	ours := ns == "" || ns == s.opts.Load.Namespace
	switch {
	case group == "" && resource == "pods" && q.Get("watch") == "true":
		s.watch(w, r, ours, podStream{s}, s.pre["pods"])
	case q.Get("limit") == "1" && strings.Contains(r.Header.Get("Accept"), "PartialObjectMetadataList"):
		// The freshness probe (Pods) and the start-up's counts of the
		// lists still streaming (every fleet resource).
		counted := (group == "" && resource == "pods") ||
			(group == sim.BatchSandboxGVR.Group && resource == sim.BatchSandboxGVR.Resource)
		s.probe(w, ours && counted)
	case group == sim.BatchSandboxGVR.Group && resource == sim.BatchSandboxGVR.Resource && q.Get("watch") == "true":
		s.watch(w, r, ours, batchSandboxStream{s}, s.pre["batchsandboxes"])
	case q.Get("watch") == "true" && s.kinds[group+"/"+version+"/"+resource] != "":
		s.watch(w, r, false, emptyStream{apiVersion: groupVersion(group, version), kind: s.kinds[group+"/"+version+"/"+resource]}, nil)
	default:
		s.notFound(w, r)
	}
}

const aggregatedDiscovery = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

func groupVersion(group, version string) string {
	if group == "" {
		return version
	}
	return group + "/" + version
}

func (s *Server) file(w http.ResponseWriter, name, contentType string) {
	data, err := testdata.ReadFile("testdata/" + name)
	if err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
		return
	}
	w.Header().Set("Content-Type", contentType)
	_, _ = w.Write(data)
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.unknown.Add(1)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":%q,"reason":"NotFound","code":404}`,
		"the load generator does not serve "+r.URL.Path)
}

// probe answers a consistent list of at most one object's metadata: the
// freshness probe, and the count of a list still streaming (the fleet has
// as many BatchSandboxes as Pods; the one item shown is a Pod's metadata
// either way, which is all a count reads).
func (s *Server) probe(w http.ResponseWriter, ours bool) {
	list := map[string]any{"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
		"metadata": map[string]any{"resourceVersion": strconv.FormatInt(s.rv.Load(), 10)}, "items": []any{}}
	if ours && s.opts.Load.N > 0 {
		pod := s.pod(0)
		list["items"] = []any{map[string]any{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": pod.ObjectMeta}}
		if s.opts.Load.N > 1 {
			list["metadata"].(map[string]any)["continue"] = "generated"
			list["metadata"].(map[string]any)["remainingItemCount"] = s.opts.Load.N - 1
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(list)
}

// stream is one resource's watch: its content type, the encoded ADDED
// event of object i, and the end-of-initial-events bookmark.
type stream interface {
	contentType() string
	added(i int) []byte
	bookmark(rv string) []byte
	live() bool // whether live events (SetRestarts) go to it
}

// watch serves a watch, with the initial events first when the client
// asked for them (sendInitialEvents=true: the watch-list protocol), then
// live events until the client goes, the server closes or timeoutSeconds
// pass. Objects are built and encoded one by one as they are written.
func (s *Server) watch(w http.ResponseWriter, r *http.Request, ours bool, st stream, pre [][]byte) {
	q := r.URL.Query()
	var events <-chan []byte
	if st.live() {
		ch, stop := s.live.subscribe()
		defer stop()
		events = ch
	}
	w.Header().Set("Content-Type", st.contentType())
	var out io.Writer = w
	var zw *gzip.Writer
	gzipped := strings.Contains(r.Header.Get("Accept-Encoding"), "gzip")
	if gzipped {
		w.Header().Set("Content-Encoding", "gzip")
		// The level kube-apiserver's responsewriters use.
		zw, _ = gzip.NewWriterLevel(w, gzip.BestSpeed)
		defer zw.Close()
		out = zw
	}
	flusher, _ := w.(http.Flusher)
	flush := func() {
		if zw != nil {
			_ = zw.Flush()
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
	w.WriteHeader(http.StatusOK)
	ctx := r.Context()
	if q.Get("sendInitialEvents") == "true" {
		const flushEvery = 64 << 10
		pending := 0
		if ours && gzipped && pre != nil {
			// Whole gzip members, before the writer's own (which starts
			// with the bookmark).
			for _, member := range pre {
				if _, err := w.Write(member); err != nil {
					return
				}
				if flusher != nil {
					flusher.Flush()
				}
				if !s.stall.wait(ctx) {
					return
				}
			}
		} else if ours {
			for i := 0; i < s.opts.Load.N; i++ {
				ev := st.added(i)
				if _, err := out.Write(ev); err != nil {
					return
				}
				pending += len(ev)
				if pending >= flushEvery {
					flush()
					pending = 0
				}
				if s.opts.Chunk > 0 && (i+1)%s.opts.Chunk == 0 {
					flush()
					pending = 0
					select {
					case <-ctx.Done():
						return
					case <-time.After(s.opts.Gap):
					}
				}
				if s.stall.on() {
					flush()
					if !s.stall.wait(ctx) {
						return
					}
				}
			}
		}
		if _, err := out.Write(st.bookmark(strconv.FormatInt(s.rv.Load(), 10))); err != nil {
			return
		}
	}
	flush()
	var timeout <-chan time.Time
	if secs, err := strconv.Atoi(q.Get("timeoutSeconds")); err == nil && secs > 0 {
		t := time.NewTimer(time.Duration(secs) * time.Second)
		defer t.Stop()
		timeout = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-timeout:
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			if !s.stall.wait(ctx) {
				return
			}
			if _, err := out.Write(ev); err != nil {
				return
			}
			flush()
		}
	}
}

// precompute encodes a stream's initial events, gzipped, in members of
// about 256 KB of events each.
func precompute(st stream, n int) ([][]byte, error) {
	var members [][]byte
	var buf bytes.Buffer
	var raw int
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	end := func() error {
		if err := zw.Close(); err != nil {
			return fmt.Errorf("wiregen: gzipping the initial list: %w", err)
		}
		members = append(members, bytes.Clone(buf.Bytes()))
		buf.Reset()
		zw.Reset(&buf)
		raw = 0
		return nil
	}
	for i := range n {
		ev := st.added(i)
		if _, err := zw.Write(ev); err != nil {
			return nil, fmt.Errorf("wiregen: gzipping the initial list: %w", err)
		}
		if raw += len(ev); raw >= 256<<10 {
			if err := end(); err != nil {
				return nil, err
			}
		}
	}
	if raw > 0 {
		if err := end(); err != nil {
			return nil, err
		}
	}
	return members, nil
}

// --- Pods: protobuf ---

type podStream struct{ s *Server }

func (podStream) contentType() string  { return "application/vnd.kubernetes.protobuf;stream=watch" }
func (p podStream) added(i int) []byte { return podFrame("ADDED", p.s.pod(i)) }
func (podStream) live() bool           { return true }

func (podStream) bookmark(rv string) []byte {
	return podFrame("BOOKMARK", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv,
		Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}})
}

// protobufMagic starts every protobuf object kube-apiserver writes.
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// podFrame is one frame of a protobuf watch: a 4-byte big-endian length,
// then a metav1.WatchEvent whose object is the enveloped Pod.
func podFrame(typ string, pod *corev1.Pod) []byte {
	raw, err := pod.Marshal()
	if err != nil {
		panic(fmt.Sprintf("wiregen: encoding a Pod: %v", err)) // generated types always encode
	}
	unk := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "v1", Kind: "Pod"}, Raw: raw}
	env, err := unk.Marshal()
	if err != nil {
		panic(fmt.Sprintf("wiregen: enveloping a Pod: %v", err))
	}
	ev := metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: append(protobufMagic[:4:4], env...)}}
	body, err := ev.Marshal()
	if err != nil {
		panic(fmt.Sprintf("wiregen: encoding a watch event: %v", err))
	}
	out := make([]byte, 4, 4+len(body))
	binary.BigEndian.PutUint32(out, uint32(len(body)))
	return append(out, body...)
}

// pod builds sandbox i's Pod as a real server stores it.
func (s *Server) pod(i int) *corev1.Pod {
	_, pod := sim.LoadObjects(s.opts.Load, i, s.opts.Now, uidOf("batchsandbox", i))
	pod.UID = uidOf("pod", i)
	pod.ResourceVersion = strconv.Itoa(1001 + 2*i)
	pod.Generation = 1
	pod.CreationTimestamp = metav1.NewTime(s.opts.Now.Truncate(time.Second))
	s.tmpl.stampPod(pod, uidOf("batchsandbox", i))
	return pod
}

// --- BatchSandboxes: JSON ---

type batchSandboxStream struct{ s *Server }

func (batchSandboxStream) contentType() string { return "application/json" }
func (batchSandboxStream) live() bool          { return false }

func (b batchSandboxStream) added(i int) []byte {
	obj, _ := sim.LoadObjects(b.s.opts.Load, i, b.s.opts.Now, uidOf("batchsandbox", i))
	obj.SetResourceVersion(strconv.Itoa(1000 + 2*i))
	obj.SetCreationTimestamp(metav1.NewTime(b.s.opts.Now.Truncate(time.Second)))
	meta := obj.Object["metadata"].(map[string]any)
	meta["managedFields"] = b.s.tmpl.batchManagedFields
	return jsonEvent("ADDED", obj.Object)
}

func (batchSandboxStream) bookmark(rv string) []byte {
	return jsonBookmark(sim.BatchSandboxGVR.GroupVersion().String(), "BatchSandbox", rv)
}

// emptyStream is a resource the fleet has none of: the bookmark only.
type emptyStream struct{ apiVersion, kind string }

func (emptyStream) contentType() string         { return "application/json" }
func (emptyStream) added(int) []byte            { return nil }
func (emptyStream) live() bool                  { return false }
func (e emptyStream) bookmark(rv string) []byte { return jsonBookmark(e.apiVersion, e.kind, rv) }

func jsonEvent(typ string, obj any) []byte {
	var buf bytes.Buffer
	buf.WriteString(`{"type":"` + typ + `","object":`)
	if err := json.NewEncoder(&buf).Encode(obj); err != nil {
		panic(fmt.Sprintf("wiregen: encoding an object: %v", err))
	}
	buf.Truncate(buf.Len() - 1) // Encode's newline
	buf.WriteString("}\n")
	return buf.Bytes()
}

func jsonBookmark(apiVersion, kind, rv string) []byte {
	return jsonEvent("BOOKMARK", map[string]any{"kind": kind, "apiVersion": apiVersion, "metadata": map[string]any{
		"resourceVersion": rv, "annotations": map[string]string{metav1.InitialEventsAnnotationKey: "true"}}})
}

// uidOf is a stable UID for an object of the fleet.
func uidOf(what string, i int) types.UID {
	return types.UID(uuid.NewHash(sha1.New(), uuid.NameSpaceOID, []byte(what+"/"+strconv.Itoa(i)), 5).String())
}

// --- what a server adds ---

// templates are what a real API server added to one loaded sandbox's
// objects: the Pod's defaults and both objects' managedFields.
type templates struct {
	pod                corev1.Pod
	batchManagedFields any
}

func loadTemplates() (templates, error) {
	var t templates
	data, err := testdata.ReadFile("testdata/pod.json")
	if err != nil {
		return t, err
	}
	if err := json.Unmarshal(data, &t.pod); err != nil {
		return t, fmt.Errorf("testdata/pod.json: %w", err)
	}
	if len(t.pod.OwnerReferences) != 1 {
		return t, fmt.Errorf("testdata/pod.json: want one owner reference, got %d", len(t.pod.OwnerReferences))
	}
	data, err = testdata.ReadFile("testdata/batchsandbox.json")
	if err != nil {
		return t, err
	}
	var bs struct {
		Metadata struct {
			ManagedFields any `json:"managedFields"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(data, &bs); err != nil {
		return t, fmt.Errorf("testdata/batchsandbox.json: %w", err)
	}
	t.batchManagedFields = bs.Metadata.ManagedFields
	return t, nil
}

// stampPod gives pod the defaults kube-apiserver set on the template Pod
// (the ones sim.LoadObjects leaves out) and the template's managedFields,
// its owner's UID in them replaced by owner.
func (t templates) stampPod(pod *corev1.Pod, owner types.UID) {
	spec := &t.pod.Spec
	if pod.Spec.SecurityContext == nil {
		pod.Spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	pod.Spec.Priority = ptr.To(int32(0))
	pod.Spec.PreemptionPolicy = spec.PreemptionPolicy
	for _, tol := range spec.Tolerations {
		if tol.TolerationSeconds != nil { // the not-ready / unreachable defaults
			pod.Spec.Tolerations = append(pod.Spec.Tolerations, tol)
		}
	}
	from := []byte(t.pod.OwnerReferences[0].UID)
	pod.ManagedFields = make([]metav1.ManagedFieldsEntry, len(t.pod.ManagedFields))
	for i, e := range t.pod.ManagedFields {
		if e.FieldsV1 != nil {
			e.FieldsV1 = metav1.NewFieldsV1(string(bytes.ReplaceAll(e.FieldsV1.GetRawBytes(), from, []byte(owner))))
		}
		pod.ManagedFields[i] = e
	}
}

// loadKinds maps group/version/resource to kind from the captured
// discovery documents.
func loadKinds() (map[string]string, error) {
	files, err := testdata.ReadDir("testdata")
	if err != nil {
		return nil, err
	}
	kinds := map[string]string{}
	for _, f := range files {
		gv := strings.TrimSuffix(f.Name(), ".json")
		if !strings.Contains(gv, "_") { // group_version.json: an APIResourceList
			continue
		}
		data, err := testdata.ReadFile("testdata/" + f.Name())
		if err != nil {
			return nil, err
		}
		var list metav1.APIResourceList
		if err := json.Unmarshal(data, &list); err != nil {
			return nil, fmt.Errorf("testdata/%s: %w", f.Name(), err)
		}
		group, version, _ := strings.Cut(gv, "_")
		for _, r := range list.APIResources {
			kinds[group+"/"+version+"/"+r.Name] = r.Kind
		}
	}
	return kinds, nil
}

// WriteKubeconfig writes a kubeconfig with one context per generator,
// named by the map's keys, the first in sorted order current.
func WriteKubeconfig(path string, servers map[string]*Server) error {
	names := make([]string, 0, len(servers))
	for name := range servers {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\nclusters:\n")
	for _, name := range names {
		fmt.Fprintf(&b, "- name: %s\n  cluster:\n    server: %s\n    certificate-authority-data: %s\n",
			name, servers[name].URL(), base64.StdEncoding.EncodeToString(servers[name].CAData()))
	}
	b.WriteString("users:\n- name: bench\n  user:\n    token: generated\ncontexts:\n")
	for _, name := range names {
		fmt.Fprintf(&b, "- name: %s\n  context:\n    cluster: %s\n    user: bench\n    namespace: %s\n", name, name, servers[name].Namespace())
	}
	if len(names) > 0 {
		fmt.Fprintf(&b, "current-context: %s\n", names[0])
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("writing the generators' kubeconfig: %w", err)
	}
	return nil
}

// Name is sandbox i's name (its BatchSandbox's; its Pod is Name(i)+"-0").
func (s *Server) Name(i int) string {
	obj, _ := sim.LoadObjects(s.opts.Load, i, s.opts.Now, uidOf("batchsandbox", i))
	return obj.GetName()
}
