package bench

import (
	"bytes"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// headerBlock encodes header fields as one HPACK block.
func headerBlock(t *testing.T, enc *hpack.Encoder, buf *bytes.Buffer, fields ...string) []byte {
	t.Helper()
	buf.Reset()
	for i := 0; i+1 < len(fields); i += 2 {
		if err := enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]}); err != nil {
			t.Fatal(err)
		}
	}
	return append([]byte(nil), buf.Bytes()...)
}

// The sniffer reads what the bench's network table is made of: each
// request's path and each response's body bytes as sent, per stream, on
// one connection carrying two requests at once.
func TestRequestLogCountsEachStreamsResponseBytes(t *testing.T) {
	log := &requestLog{}
	dialed := time.Now()
	sn := log.conn(true, dialed)

	var up bytes.Buffer
	up.WriteString(http2.ClientPreface)
	upFr := http2.NewFramer(&up, nil)
	var upHdr bytes.Buffer
	upEnc := hpack.NewEncoder(&upHdr)
	for _, s := range []struct {
		id   uint32
		path string
	}{{1, "/api/v1/pods?limit=500"}, {3, "/apis/sandbox.opensandbox.io/v1alpha1/namespaces/ns/batchsandboxes?watch=true&sendInitialEvents=true"}} {
		block := headerBlock(t, upEnc, &upHdr, ":method", "GET", ":scheme", "https", ":authority", "x", ":path", s.path)
		if err := upFr.WriteHeaders(http2.HeadersFrameParam{StreamID: s.id, BlockFragment: block, EndStream: true, EndHeaders: true}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sn.requests.Write(up.Bytes()); err != nil {
		t.Fatal(err)
	}
	// The parser has the bytes once Write returns, not yet the frames: the
	// responses must find their streams.
	for deadline := time.Now().Add(time.Minute); len(log.snapshot()) < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the parser logged %d requests of 2", len(log.snapshot()))
		}
	}

	var down bytes.Buffer
	downFr := http2.NewFramer(&down, nil)
	var downHdr bytes.Buffer
	downEnc := hpack.NewEncoder(&downHdr)
	for _, id := range []uint32{1, 3} {
		block := headerBlock(t, downEnc, &downHdr, ":status", "200", "content-encoding", "gzip")
		if err := downFr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block, EndHeaders: true}); err != nil {
			t.Fatal(err)
		}
	}
	// Interleaved DATA: 100 + 50 bytes on stream 1 (then its end), 70 on 3 (still open).
	_ = downFr.WriteData(1, false, make([]byte, 100))
	_ = downFr.WriteData(3, false, make([]byte, 70))
	_ = downFr.WriteData(1, true, make([]byte, 50))
	if _, err := sn.responses.Write(down.Bytes()); err != nil {
		t.Fatal(err)
	}
	sn.close()

	reqs := log.snapshot()
	if len(reqs) != 2 {
		t.Fatalf("logged %d requests, want 2: %+v", len(reqs), reqs)
	}
	list, watch := reqs[0], reqs[1]
	if list.path != "/api/v1/pods" || list.resource() != "pods" || list.kind() != "list" {
		t.Errorf("first request: path %q resource %q kind %q, want /api/v1/pods, pods, list", list.path, list.resource(), list.kind())
	}
	if list.status != "200" || list.encoding != "gzip" || list.bytes != 150 || list.end.IsZero() {
		t.Errorf("first response: status %q encoding %q bytes %d ended %v, want 200 gzip 150 true", list.status, list.encoding, list.bytes, !list.end.IsZero())
	}
	if watch.resource() != "batchsandboxes" || watch.kind() != "watch-list" || watch.bytes != 70 || !watch.end.IsZero() {
		t.Errorf("second: resource %q kind %q bytes %d ended %v, want batchsandboxes watch-list 70 open", watch.resource(), watch.kind(), watch.bytes, !watch.end.IsZero())
	}
	// Both went on the one connection, which the log names; the next
	// connection gets the next number.
	for _, r := range reqs {
		if r.conn != 1 || !r.dialed.Equal(dialed) {
			t.Errorf("%s: connection %d dialed at %v, want 1 at %v", r.path, r.conn, r.dialed, dialed)
		}
	}
	next := log.conn(false, time.Now())
	next.close()
	if next.id != 2 {
		t.Errorf("the second connection is number %d, want 2", next.id)
	}
}
