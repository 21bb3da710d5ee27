package files

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/kube/execd"
)

// daemon is the transport of t when it reaches execd's files API.
func (c *Copier) daemon(t Target) (execute.DaemonTransport, error) {
	dt, ok := c.Exec.Transport(t.Via).(execute.DaemonTransport)
	if !ok {
		return nil, refusal.New(execute.CodeTransport, fmt.Sprintf("transport %s has no files API: use --via kube", t.Via), false)
	}
	return dt, nil
}

// uploadExecd sends one regular file through POST /files/upload, between
// the identity checks. A directory goes over pods/exec (tar): execd's API
// takes one file a request, and a directory half sent is worse than none.
func (c *Copier) uploadExecd(ctx context.Context, t Target, src string, fi fs.FileInfo, dest string) (Stats, execute.Result, error) {
	if !fi.Mode().IsRegular() {
		return Stats{}, execute.Result{}, refusal.New(refusal.CodeUsage,
			fmt.Sprintf("%s is not a regular file: execd's files API takes one file; copy directories with --via kube", src), false)
	}
	dt, err := c.daemon(t)
	if err != nil {
		return Stats{}, execute.Result{}, err
	}
	f, err := os.Open(src)
	if err != nil {
		return Stats{}, execute.Result{}, refusal.New(CodeLocal, err.Error(), false)
	}
	defer f.Close()
	var st Stats
	res, err := c.Exec.Guard(ctx, t, func(ctx context.Context, d execute.Dispatch) (execute.Outcome, error) {
		cl, done, err := dt.Daemon(ctx, d)
		if err != nil {
			return execute.Outcome{}, err
		}
		defer done()
		cr := &counter{r: io.LimitReader(f, fi.Size())}
		if err := cl.Upload(ctx, execd.FileMetadata{Path: dest, Mode: execd.OctalDigits(fi.Mode())}, cr); err != nil {
			return execute.Outcome{}, execute.DaemonFailure(err)
		}
		st = Stats{Bytes: cr.n, Entries: 1}
		return execute.Outcome{}, nil
	})
	return st, res, err
}

// downloadExecd reads one file through GET /files/download, between the
// identity checks, into the sink (bounded by the sink's limit).
func (c *Copier) downloadExecd(ctx context.Context, t Target, file string, into sink) (Stats, execute.Result, error) {
	dt, err := c.daemon(t)
	if err != nil {
		return Stats{}, execute.Result{}, err
	}
	var st Stats
	var sinkErr error
	t.ReadsOnly = true
	res, err := c.Exec.Guard(ctx, t, func(ctx context.Context, d execute.Dispatch) (execute.Outcome, error) {
		cl, done, err := dt.Daemon(ctx, d)
		if err != nil {
			return execute.Outcome{}, err
		}
		defer done()
		var fetchErr error
		st, sinkErr = into.file(ctx, func(w io.Writer, limit int64) (int64, error) {
			n, err := cl.Download(ctx, file, w, limit)
			fetchErr = err
			return n, err
		})
		if fetchErr != nil {
			// A read changes nothing in the sandbox: the error's executed
			// speaks of what was written here, which is nothing kept.
			r := asError(execute.DaemonFailure(fetchErr))
			r.Executed = refusal.ExecutedNo
			return execute.Outcome{}, r
		}
		return execute.Outcome{}, sinkErr
	})
	return st, res, err
}

type counter struct {
	r io.Reader
	n int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
