package execd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/sandscope/sandscope/internal/crash"
)

// FileMetadata is the metadata part of POST /files/upload. Mode is the
// permission bits written as octal digits (0o644 is sent as 644), as
// OpenSandbox's SDKs send it.
type FileMetadata struct {
	Path  string `json:"path"`
	Owner string `json:"owner,omitempty"`
	Group string `json:"group,omitempty"`
	Mode  int    `json:"mode,omitempty"`
}

// OctalDigits is perm as execd's mode field wants it.
func OctalDigits(perm fs.FileMode) int {
	n, _ := strconv.Atoi(strconv.FormatUint(uint64(perm.Perm()), 8))
	return n
}

// Upload sends one file to POST /files/upload as a multipart body (part
// "metadata", then part "file"), streamed from content. An Error with Sent
// false means the daemon refused it before reading the file.
func (c *Client) Upload(ctx context.Context, meta FileMetadata, content io.Reader) error {
	mdata, err := json.Marshal(meta)
	if err != nil {
		return &Error{Err: fmt.Errorf("encoding file metadata: %w", err)}
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	crash.Go(func() {
		err := func() error {
			part, err := mw.CreateFormField("metadata")
			if err != nil {
				return err
			}
			if _, err := part.Write(mdata); err != nil {
				return err
			}
			part, err = mw.CreateFormFile("file", lastElem(meta.Path))
			if err != nil {
				return err
			}
			if _, err := io.Copy(part, content); err != nil {
				return err
			}
			return mw.Close()
		}()
		pw.CloseWithError(err)
	})
	var connected atomic.Bool
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { connected.Store(true) }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, c.endpoint("/files/upload", ""), pr)
	if err != nil {
		pr.CloseWithError(err)
		return &Error{Err: err}
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	c.auth(req)
	resp, err := c.client().Do(req)
	pr.CloseWithError(io.ErrClosedPipe) // ends the writer if the request stopped reading
	if err != nil {
		return &Error{Sent: connected.Load(), Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		e := refusal(resp).(*Error)
		// The daemon answered after reading (part of) the body: a 4xx before
		// the file was stored is the usual case, but nothing proves it.
		e.Sent = resp.StatusCode >= 500
		return e
	}
	return nil
}

// Download reads GET /files/download?path= into w, at most limit bytes: the
// file is the sandbox's, so its size is never taken on trust. It returns
// the bytes copied; more than limit is an error after limit bytes.
func (c *Client) Download(ctx context.Context, path string, w io.Writer, limit int64) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.endpoint("/files/download", path), nil)
	if err != nil {
		return 0, &Error{Err: err}
	}
	c.auth(req)
	resp, err := c.client().Do(req)
	if err != nil {
		return 0, &Error{Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, refusal(resp)
	}
	n, err := io.Copy(w, io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return n, &Error{Sent: true, Err: fmt.Errorf("reading the file: %w", err)}
	}
	if n > limit {
		return n, &Error{Sent: true, Code: "TOO_LARGE", Message: fmt.Sprintf("the file is larger than %d bytes", limit)}
	}
	return n, nil
}

func (c *Client) endpoint(p, file string) string {
	u := strings.TrimRight(c.BaseURL, "/") + p
	if file != "" {
		u += "?path=" + url.QueryEscape(file)
	}
	return u
}

func lastElem(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}
