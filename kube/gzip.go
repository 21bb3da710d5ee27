package kube

import (
	"bufio"
	"io"
	"net/http"

	"github.com/klauspost/compress/gzip"
)

// The API server gzips the watchers' responses, streamed initial lists
// included, and net/http's transparent gzip reads them with compress/flate:
// at 50,000 sandboxes a seventh of the client's start-up CPU, and, since
// that decoder builds new Huffman tables for every block, 14 MB of garbage.
// klauspost/compress reads the same stream with reused tables, faster. The
// watcher's transport asks for gzip itself, which turns net/http's own
// handling off (it decodes only what it asked for), and decodes the body
// with klauspost/compress.

// gzipTransport asks for gzip and decodes a gzipped response body, as
// net/http's transport does when it adds the header itself.
type gzipTransport struct{ next http.RoundTripper }

func (t gzipTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// As net/http: not when the caller chose an encoding or a range (a
	// range of the gzipped bytes is not a range of the body), nor for HEAD.
	if req.Header.Get("Accept-Encoding") != "" || req.Header.Get("Range") != "" || req.Method == http.MethodHead {
		return t.next.RoundTrip(req)
	}
	req = req.Clone(req.Context()) // a RoundTripper must not change the caller's request
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.Header.Get("Content-Encoding") != "gzip" {
		return resp, err
	}
	resp.Body = &gzipBody{compressed: resp.Body}
	resp.Header.Del("Content-Encoding")
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
	resp.Uncompressed = true
	return resp, nil
}

// compressedBuffer is the size of a gzipped body's read buffer: the
// decoder reads the compressed bytes through it rather than the 4 KB one it
// would make. A streamed initial list is gigabytes before gzip at 150,000
// sandboxes, and each refill is a Read through the health check's body and
// HTTP/2's, whose frames are up to 16 KB. A bufio.Reader's refill returns
// what one Read gave, so an event is still decoded as soon as its bytes
// arrive.
const compressedBuffer = 32 << 10

// gzipBody decodes a gzipped body. Its decoder is made on the first Read,
// which reads the gzip header: a watch's header arrives with its first
// event, and RoundTrip must not wait for that. A body is read by one
// goroutine at a time.
type gzipBody struct {
	compressed io.ReadCloser
	r          *gzip.Reader
	err        error // a header that could not be read, for every Read after
}

func (b *gzipBody) Read(p []byte) (int, error) {
	if b.r == nil && b.err == nil {
		b.r, b.err = gzip.NewReader(bufio.NewReaderSize(b.compressed, compressedBuffer))
	}
	if b.err != nil {
		return 0, b.err
	}
	return b.r.Read(p)
}

// Close closes the connection's body; a Read blocked in it returns, as it
// would reading the body itself.
func (b *gzipBody) Close() error { return b.compressed.Close() }
