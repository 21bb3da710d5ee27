// Package execd speaks the HTTP protocol of OpenSandbox's in-sandbox exec
// daemon (execd, port 44772): POST /command, answered by a stream of raw JSON
// frames separated by blank lines (init, stdout, stderr, ping, and finally
// execution_complete or error).
//
// The client tells apart failures where the command provably did not start
// (nothing reached the daemon, or the daemon refused before its first frame)
// from failures after the request may have been read (Error.Sent), because
// sandscope never reports success it did not see and never retries a command
// that may have run. The access token is sent in a header and never appears
// in an error.
package execd

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
)

// DefaultPort is execd's port in every OpenSandbox Pod.
const DefaultPort = osv1.ExecdPort

// TokenHeader carries the optional access token.
const TokenHeader = "X-EXECD-ACCESS-TOKEN"

// CommandRequest is the body of POST /command.
type CommandRequest struct {
	Command    string            `json:"command"`
	Cwd        string            `json:"cwd"`
	Background bool              `json:"background"`
	TimeoutMS  int64             `json:"timeout,omitempty"`
	Envs       map[string]string `json:"envs,omitempty"`
}

// Frame is one object of the /command stream. Fields sandscope does not use
// (timestamp, results) are not declared so that their types cannot break
// decoding.
type Frame struct {
	Type           string      `json:"type"`
	Text           string      `json:"text,omitempty"`
	ExecutionCount int         `json:"execution_count,omitempty"`
	Error          *FrameError `json:"error,omitempty"`
}

// FrameError is the error member of an "error" frame: ename CommandExecError
// and evalue = the exit code for a command that exited non-zero.
type FrameError struct {
	Name      string   `json:"ename"`
	Value     string   `json:"evalue"`
	Traceback []string `json:"traceback,omitempty"`
}

// Frame types.
const (
	FrameInit     = "init"
	FrameStdout   = "stdout"
	FrameStderr   = "stderr"
	FrameComplete = "execution_complete"
	FrameFailed   = "error"
	FramePing     = "ping"
)

// Result is a command that provably ended: its end frame arrived.
type Result struct {
	CommandID string
	ExitCode  int
}

// Error is a failed /command call.
type Error struct {
	// Sent: the request may have reached the daemon, so the command may have
	// run (the connection was established and the answer never completed).
	Sent bool
	// Status is the HTTP status when the daemon answered with an error body
	// before starting the command (Sent is false then).
	Status int
	// Code and Message come from the daemon's JSON error, or from an error frame.
	Code, Message string
	// Location is where a redirect (3xx) pointed; it was not followed.
	Location string
	Err      error
}

// Redirected reports whether the daemon answered with a redirect, which is
// never followed.
func (e *Error) Redirected() bool { return e.Status >= 300 && e.Status < 400 }

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("execd")
	if e.Status != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.Status)
	}
	if e.Code != "" {
		fmt.Fprintf(&b, ": %s", e.Code)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Unauthorized reports whether the daemon refused the token.
func (e *Error) Unauthorized() bool {
	return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden
}

// Client calls one execd.
type Client struct {
	// BaseURL is http://host:port of the daemon.
	BaseURL string
	// Token, when set, goes into X-EXECD-ACCESS-TOKEN. Never logged.
	Token string
	// HTTP defaults to a client without keep-alives: every command dials the
	// address anew, right after the identity check, instead of reusing a
	// connection opened for an earlier check.
	HTTP *http.Client
}

// NewHTTPClient is the default client: no keep-alives, no proxy (a Pod IP
// must be dialled directly), bounded dial and header waits, and no
// redirects. Whatever answers on a sandbox's port is sandbox code: a
// redirect it sends would carry the command and the access token to any
// host it names, so a 3xx is returned as the answer (a refusal) instead.
func NewHTTPClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			DisableKeepAlives:     true,
			TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
			ResponseHeaderTimeout: 30 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// pinnedHTTPClient is NewHTTPClient that dials only addr (host:port): the
// address the identity check approved, and nothing a response could name.
func pinnedHTTPClient(addr string) *http.Client {
	c := NewHTTPClient()
	dial := c.Transport.(*http.Transport).DialContext
	c.Transport.(*http.Transport).DialContext = func(ctx context.Context, network, to string) (net.Conn, error) {
		if to != addr {
			return nil, fmt.Errorf("refusing to dial %s: only the checked address %s may be dialled", to, addr)
		}
		return dial(ctx, network, to)
	}
	return c
}

// Ping calls GET /ping; nil means the daemon answers.
func (c *Client) Ping(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(c.BaseURL, "/")+"/ping", nil)
	if err != nil {
		return &Error{Err: err}
	}
	c.auth(req)
	resp, err := c.client().Do(req)
	if err != nil {
		return &Error{Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return refusal(resp)
	}
	return nil
}

// Run posts the command and copies its output as it streams: each stdout or
// stderr frame's text, with a newline appended when the daemon sent a line
// without one. It returns a Result only when the end frame arrived.
func (c *Client) Run(ctx context.Context, cmd CommandRequest, stdout, stderr io.Writer) (Result, error) {
	body, err := json.Marshal(cmd)
	if err != nil {
		return Result{}, &Error{Err: fmt.Errorf("encoding command: %w", err)}
	}
	var connected atomic.Bool
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { connected.Store(true) }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost,
		strings.TrimRight(c.BaseURL, "/")+"/command", bytes.NewReader(body))
	if err != nil {
		return Result{}, &Error{Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	c.auth(req)
	resp, err := c.client().Do(req)
	if err != nil {
		return Result{}, &Error{Sent: connected.Load(), Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Result{}, refusal(resp)
	}
	return readFrames(resp.Body, stdout, stderr)
}

// readFrames reads the stream until its end frame. A stream that ends without
// one is an Error with Sent set: the command may have run, or may still run.
func readFrames(r io.Reader, stdout, stderr io.Writer) (Result, error) {
	budget := &frameBudget{r: r, limit: MaxFrameBytes}
	dec := json.NewDecoder(budget)
	var res Result
	for {
		var f Frame
		err := dec.Decode(&f)
		budget.limit = dec.InputOffset() + MaxFrameBytes
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("stream ended before the command's end frame")
			}
			return res, &Error{Sent: true, Err: fmt.Errorf("reading command stream: %w", err)}
		}
		switch f.Type {
		case FrameInit:
			res.CommandID = f.Text
		case FrameStdout:
			writeLine(stdout, f.Text)
		case FrameStderr:
			writeLine(stderr, f.Text)
		case FrameComplete:
			res.ExitCode = 0
			return res, nil
		case FrameFailed:
			if f.Error != nil && f.Error.Name == "CommandExecError" {
				if n, err := strconv.Atoi(strings.TrimSpace(f.Error.Value)); err == nil {
					res.ExitCode = n
					return res, nil
				}
			}
			e := &Error{Sent: true, Code: "COMMAND_ERROR"}
			if f.Error != nil {
				e.Code, e.Message = f.Error.Name, f.Error.Value
			}
			return res, e
		}
	}
}

// MaxFrameBytes bounds one frame of the /command stream. The stream is
// written by sandbox code: a frame that never ends must cost bounded
// memory, not whatever the sandbox sends.
const MaxFrameBytes = 4 << 20

var errFrameTooLarge = fmt.Errorf("a frame of the command stream is larger than %d bytes", MaxFrameBytes)

// frameBudget lets the JSON decoder read at most limit bytes in all; the
// reader moves limit to MaxFrameBytes past the end of each decoded frame.
type frameBudget struct {
	r           io.Reader
	read, limit int64
}

func (b *frameBudget) Read(p []byte) (int, error) {
	if b.read >= b.limit {
		return 0, errFrameTooLarge
	}
	if room := b.limit - b.read; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := b.r.Read(p)
	b.read += int64(n)
	return n, err
}

func writeLine(w io.Writer, text string) {
	if w == nil {
		return
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	io.WriteString(w, text) //nolint:errcheck // a local writer; the stream goes on
}

// refusal turns a non-200 answer into an Error. The daemon answers errors
// before its first frame, so the command did not start.
func refusal(resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	e := &Error{Status: resp.StatusCode}
	if e.Redirected() {
		e.Location = resp.Header.Get("Location")
		e.Message = fmt.Sprintf("redirect to %q not followed", e.Location)
		return e
	}
	var body struct {
		Code    string          `json:"code"`
		Message string          `json:"message"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &body) == nil {
		e.Code, e.Message = body.Code, body.Message
		var s string
		if e.Message == "" && json.Unmarshal(body.Error, &s) == nil {
			e.Message = s
		}
	}
	if e.Message == "" {
		e.Message = strings.TrimSpace(string(bytes.ToValidUTF8(data[:min(len(data), 200)], nil)))
	}
	return e
}

func (c *Client) auth(req *http.Request) {
	if c.Token != "" {
		req.Header.Set(TokenHeader, c.Token)
	}
}

func (c *Client) client() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	if u, err := url.Parse(c.BaseURL); err == nil && u.Host != "" {
		port := u.Port()
		if port == "" {
			port = "80"
			if u.Scheme == "https" {
				port = "443"
			}
		}
		return pinnedHTTPClient(net.JoinHostPort(u.Hostname(), port))
	}
	return NewHTTPClient()
}
