package execd_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sandscope/sandscope/internal/deadserver"
	"github.com/sandscope/sandscope/kube/execd"
	"github.com/sandscope/sandscope/kube/execd/execdtest"
)

func TestRunFrames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		status     int
		body       string
		wantOut    string
		wantErrOut string
		wantCode   int
		wantErr    bool
		sent       bool
	}{
		{name: "complete", status: 200,
			body:    `{"type":"init","text":"c1"}` + "\n\n" + `{"type":"stdout","text":"hi"}` + "\n\n" + `{"type":"ping"}` + "\n\n" + `{"type":"stderr","text":"oops\n"}` + "\n\n" + `{"type":"execution_complete","execution_time":3}` + "\n\n",
			wantOut: "hi\n", wantErrOut: "oops\n"},
		{name: "non-zero exit", status: 200,
			body:     `{"type":"init","text":"c2"}` + "\n\n" + `{"type":"error","error":{"ename":"CommandExecError","evalue":"3","traceback":[]}}` + "\n\n",
			wantCode: 3},
		{name: "no end frame", status: 200, body: `{"type":"init","text":"c3"}` + "\n\n" + `{"type":"stdout","text":"part"}`,
			wantOut: "part\n", wantErr: true, sent: true},
		{name: "runtime error frame", status: 200, body: `{"type":"error","error":{"ename":"RuntimeError","evalue":"boom"}}`,
			wantErr: true, sent: true},
		{name: "refused before start", status: 400, body: `{"code":"INVALID_REQUEST_BODY","message":"bad"}`, wantErr: true},
		{name: "unauthorized", status: 401, body: `{"error":"Unauthorized: invalid or missing header X-EXECD-ACCESS-TOKEN"}`, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var gotToken string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				gotToken = r.Header.Get(execd.TokenHeader)
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			var out, errOut bytes.Buffer
			c := &execd.Client{BaseURL: srv.URL, Token: "tok"}
			res, err := c.Run(context.Background(), execd.CommandRequest{Command: "x"}, &out, &errOut)
			if gotToken != "tok" {
				t.Errorf("token header %q", gotToken)
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v", err)
			}
			var ee *execd.Error
			if err != nil {
				if !errors.As(err, &ee) || ee.Sent != tc.sent {
					t.Fatalf("err %v, want Sent=%t", err, tc.sent)
				}
				if strings.Contains(err.Error(), "tok") {
					t.Fatalf("token in error: %v", err)
				}
			} else if res.ExitCode != tc.wantCode {
				t.Fatalf("exit %d", res.ExitCode)
			}
			if out.String() != tc.wantOut || errOut.String() != tc.wantErrOut {
				t.Fatalf("stdout %q stderr %q", out.String(), errOut.String())
			}
			if tc.status == 401 && !ee.Unauthorized() {
				t.Fatal("401 not Unauthorized")
			}
		})
	}
}

func TestRunNothingListeningIsNotSent(t *testing.T) {
	t.Parallel()
	_, err := (&execd.Client{BaseURL: "http://" + deadserver.Refusing(t)}).Run(context.Background(), execd.CommandRequest{Command: "x"}, io.Discard, io.Discard)
	var ee *execd.Error
	if !errors.As(err, &ee) || ee.Sent {
		t.Fatalf("err %v", err)
	}
}

// The test daemon speaks the same protocol the client reads.
func TestAgainstTestDaemon(t *testing.T) {
	t.Parallel()
	d, err := execdtest.Start(execdtest.Config{Addr: "127.79.0.2:0", Identity: "pod=ns/a uid=u1", Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	c := &execd.Client{BaseURL: d.URL(), Token: "t"}
	if err := c.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err := c.Run(context.Background(), execd.CommandRequest{Command: "sh -c 'echo hello; exit 4'"}, &out, io.Discard)
	if err != nil || res.ExitCode != 4 || out.String() != "execd pod=ns/a uid=u1\nhello\n" || res.CommandID == "" {
		t.Fatalf("%v %+v %q", err, res, out.String())
	}
	_, err = (&execd.Client{BaseURL: d.URL()}).Run(context.Background(), execd.CommandRequest{Command: "true"}, io.Discard, io.Discard)
	var ee *execd.Error
	if !errors.As(err, &ee) || !ee.Unauthorized() || ee.Sent {
		t.Fatalf("no token: %v", err)
	}
	if d.Commands() != 1 || d.Requests() != 3 {
		t.Fatalf("commands %d requests %d", d.Commands(), d.Requests())
	}
}

// A frame that never ends (sandbox code writes the stream) costs bounded
// memory: the read stops once one frame passes MaxFrameBytes, and the
// command counts as sent (it may have run).
func TestRunOversizedFrameIsBounded(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"type":"init","text":"c1"}`+"\n\n"+`{"type":"stdout","text":"`)
		chunk := bytes.Repeat([]byte("A"), 64<<10)
		for i := 0; i < (execd.MaxFrameBytes/len(chunk))*4; i++ {
			if _, err := w.Write(chunk); err != nil {
				return // the client gave up, as it should
			}
		}
	}))
	defer srv.Close()
	c := &execd.Client{BaseURL: srv.URL}
	_, err := c.Run(context.Background(), execd.CommandRequest{Command: "yes"}, io.Discard, io.Discard)
	var ee *execd.Error
	if !errors.As(err, &ee) || !ee.Sent || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("err %v, want a sent error about the frame size", err)
	}
}

// A redirect is the daemon's answer, never followed: the target it names
// receives nothing (not the command, not the token).
func TestRedirectIsNotFollowed(t *testing.T) {
	t.Parallel()
	var stolen atomic.Int64
	thief := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { stolen.Add(1) }))
	defer thief.Close()
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, thief.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer hostile.Close()
	c := &execd.Client{BaseURL: hostile.URL, Token: "t0ken"}
	for name, call := range map[string]func() error{
		"ping": func() error { return c.Ping(context.Background()) },
		"command": func() error {
			_, err := c.Run(context.Background(), execd.CommandRequest{Command: "id"}, io.Discard, io.Discard)
			return err
		},
	} {
		err := call()
		var ee *execd.Error
		if !errors.As(err, &ee) || !ee.Redirected() || ee.Sent || !strings.HasPrefix(ee.Location, thief.URL) {
			t.Errorf("%s: err %v, want an unsent redirect refusal", name, err)
		}
	}
	if n := stolen.Load(); n != 0 {
		t.Fatalf("the redirect target received %d requests", n)
	}
}
