package files

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/internal/crash"
	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/model"
)

// Codes of a copy, besides exec's identity codes and the shared ones.
const (
	// CodeArchiveRefused: what came back from the sandbox broke Extract's
	// rules or limits; nothing of it was kept.
	CodeArchiveRefused = "ARCHIVE_REFUSED"
	// CodeRemoteFailed: the copy reached the sandbox's own Pod and failed
	// there (no such path, a full disk); tar's message is in the evidence.
	CodeRemoteFailed = "REMOTE_FAILED"
	// CodeLocal: the local side failed (no such file, a destination that
	// exists as a directory).
	CodeLocal = "LOCAL"
)

// Copier moves files to and from sandboxes through an Executor, so every
// copy is proven to reach the sandbox's own Pod before anything is sent or
// read, and again after. Safe for concurrent use.
type Copier struct {
	Exec *execute.Executor
	// ReadOnly refuses uploads (READ_ONLY); downloads stay allowed.
	ReadOnly bool
	Limits   Limits
}

// Target names the sandbox of a copy, as an exec request does: Namespace,
// Ref or Sandbox, Container, Via, ExpectUID, ExpectIP, Timeout.
type Target = execute.Request

// Upload copies Source (a local file or directory, or "-" for Stdin) to
// RemotePath in the sandbox: RemotePath becomes the copy.
type Upload struct {
	Target     Target
	Source     string
	Stdin      io.Reader
	RemotePath string
}

// Download copies RemotePath from the sandbox to Dest: a local path (into
// it when it is a directory), or "-" for Stdout (one regular file).
type Download struct {
	Target     Target
	RemotePath string
	Dest       string
	Stdout     io.Writer
}

// Outcome is a copy that provably reached the sandbox's own Pod.
type Outcome struct {
	// Written is always "yes" in an Outcome: the bytes are at the
	// destination and the Pod was the sandbox's before and after.
	Written refusal.Executed `json:"written"`
	Source  string           `json:"source"`
	Dest    string           `json:"dest"`
	Bytes   int64            `json:"bytes"`
	Entries int              `json:"entries"`
	Target  execute.Target   `json:"target"`
	// Evidence the caller should see though the copy went through.
	Evidence   []model.Evidence `json:"evidence,omitempty"`
	DurationMs int64            `json:"durationMs"`
}

// Upload runs one upload. Its error is a *refusal.Error whose Executed
// says whether anything may have been written in the sandbox: "no" (exit
// 125), "unknown" (126): never retry an unknown blindly.
func (c *Copier) Upload(ctx context.Context, u Upload) (Outcome, error) {
	start := time.Now()
	if c.ReadOnly {
		return Outcome{}, refusal.New(refusal.CodeReadOnly, "sandscope runs read-only (--readonly): uploads are refused", false)
	}
	dir, base, err := remotePath(u.RemotePath)
	if err != nil {
		return Outcome{}, refusal.New(refusal.CodeUsage, err.Error(), false)
	}
	lim := c.Limits.orDefault()
	src := u.Source
	if src == "-" {
		spooled, err := spool(u.Stdin, lim.MaxBytes)
		if err != nil {
			return Outcome{}, refusal.New(CodeLocal, err.Error(), false)
		}
		defer os.Remove(spooled)
		src = spooled
	}
	fi, err := os.Lstat(src)
	if err != nil {
		return Outcome{}, refusal.New(CodeLocal, err.Error(), false)
	}
	var st Stats
	var res execute.Result
	if u.Target.Via == "" || u.Target.Via == execute.ViaKube {
		archive := func(w io.Writer) (Stats, error) { return writeArchive(w, src, base) }
		st, res, err = c.uploadTar(ctx, u.Target, dir, archive)
	} else {
		st, res, err = c.uploadExecd(ctx, u.Target, src, fi, path.Join(dir, base))
	}
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Written: refusal.ExecutedYes, Source: u.Source, Dest: refOf(u.Target) + ":" + u.RemotePath, Bytes: st.Bytes, Entries: st.Entries,
		Target: res.Target, Evidence: inferredOnly(res.Evidence), DurationMs: time.Since(start).Milliseconds()}, nil
}

// uploadTar streams the archive into `tar -xmf - -C DIR` over pods/exec,
// as kubectl cp does (-m: the sandbox's clock stamps the files).
func (c *Copier) uploadTar(ctx context.Context, t Target, dir string, archive func(io.Writer) (Stats, error)) (Stats, execute.Result, error) {
	pr, pw := io.Pipe()
	var st Stats
	var archErr error
	done := make(chan struct{})
	crash.Go(func() {
		defer close(done)
		st, archErr = archive(pw)
		pw.CloseWithError(archErr)
	})
	var stderr tail
	req := t
	req.Command, req.Stdin, req.Stdout, req.Stderr = []string{"tar", "-xmf", "-", "-C", dir}, pr, io.Discard, &stderr
	res, err := c.Exec.Run(ctx, req)
	pr.CloseWithError(errors.New("the copy ended")) // the archive writer stops if tar did not read it all
	<-done
	switch {
	case err != nil:
		return st, res, asCopyError(err, archErr)
	case archErr != nil:
		return st, res, &refusal.Error{Code: CodeLocal, Executed: refusal.ExecutedUnknown, Err: archErr, Evidence: res.Evidence,
			Message: "reading the local files failed after the upload began, so part of them may be in the sandbox: " + archErr.Error()}
	case res.ExitCode != 0:
		return st, res, &refusal.Error{Code: CodeRemoteFailed, Executed: refusal.ExecutedUnknown, Evidence: append(res.Evidence, stderr.evidence("tar")...),
			Message: fmt.Sprintf("tar exited %d in the sandbox's Pod %s: part of the files may be written", res.ExitCode, res.Target.Pod)}
	}
	return st, res, nil
}

// Download runs one download. Nothing is left at the destination unless the
// Pod was the sandbox's before and after the copy: the files are extracted
// under a temporary name beside it and renamed only then. Its error is a
// *refusal.Error whose Executed says whether anything was written
// locally: "no", or "unknown" (kept under the temporary name it names).
func (c *Copier) Download(ctx context.Context, d Download) (Outcome, error) {
	start := time.Now()
	dir, base, err := remotePath(d.RemotePath)
	if err != nil {
		return Outcome{}, refusal.New(refusal.CodeUsage, err.Error(), false)
	}
	lim := c.Limits.orDefault()
	if d.Dest == "-" {
		return c.downloadStdout(ctx, d, dir, base, lim, start)
	}
	final, err := finalPath(d.Dest, base)
	if err != nil {
		return Outcome{}, refusal.New(CodeLocal, err.Error(), false)
	}
	staging, err := os.MkdirTemp(filepath.Dir(final), ".sandscope-cp-")
	if err != nil {
		return Outcome{}, refusal.New(CodeLocal, "making a temporary directory beside the destination: "+err.Error(), false)
	}
	keep := false
	defer func() {
		if !keep {
			os.RemoveAll(staging)
		}
	}()
	root, err := os.OpenRoot(staging)
	if err != nil {
		return Outcome{}, refusal.New(CodeLocal, err.Error(), false)
	}
	defer root.Close()
	st, res, err := c.read(ctx, d.Target, dir, base, rootSink{root: root, base: base, lim: lim})
	if err != nil {
		var r *refusal.Error
		if errors.As(err, &r) && r.Executed == refusal.ExecutedUnknown && r.Code != CodeArchiveRefused {
			keep = true
			r.Message += fmt.Sprintf("; what was read is kept in %s, not at %s", staging, final)
		}
		return Outcome{}, err
	}
	if err := os.Rename(filepath.Join(staging, base), final); err != nil {
		return Outcome{}, &refusal.Error{Code: CodeLocal, Executed: refusal.ExecutedNo, Err: err, Evidence: res.Evidence,
			Message: "the copy was confirmed but could not be put in place: " + err.Error()}
	}
	return Outcome{Written: refusal.ExecutedYes, Source: refOf(d.Target) + ":" + d.RemotePath, Dest: final, Bytes: st.Bytes, Entries: st.Entries,
		Target: res.Target, Evidence: inferredOnly(res.Evidence), DurationMs: time.Since(start).Milliseconds()}, nil
}

// downloadStdout spools one regular file and writes it to Stdout once the
// Pod is confirmed; through a terminal its control characters are shown
// as stand-ins (the sandbox's bytes never steer the operator's terminal).
func (c *Copier) downloadStdout(ctx context.Context, d Download, dir, base string, lim Limits, start time.Time) (Outcome, error) {
	spool, err := os.CreateTemp("", "sandscope-cp-*")
	if err != nil {
		return Outcome{}, refusal.New(CodeLocal, err.Error(), false)
	}
	defer os.Remove(spool.Name())
	defer spool.Close()
	st, res, err := c.read(ctx, d.Target, dir, base, spoolSink{w: spool, base: base, lim: lim})
	if err != nil {
		return Outcome{}, err
	}
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return Outcome{}, refusal.New(CodeLocal, err.Error(), false)
	}
	out := d.Stdout
	if isTerminal(out) {
		out = textsafe.NewWriter(out)
	}
	if _, err := io.Copy(out, spool); err != nil {
		return Outcome{}, &refusal.Error{Code: CodeLocal, Executed: refusal.ExecutedUnknown, Err: err, Message: "writing standard output: " + err.Error()}
	}
	return Outcome{Written: refusal.ExecutedYes, Source: refOf(d.Target) + ":" + d.RemotePath, Dest: "-", Bytes: st.Bytes, Entries: st.Entries,
		Target: res.Target, Evidence: inferredOnly(res.Evidence), DurationMs: time.Since(start).Milliseconds()}, nil
}

// sink takes what a download reads: a tar stream from pods/exec, or the
// one file execd's files API sends.
type sink interface {
	tar(r io.Reader) (Stats, error)
	file(ctx context.Context, fetch func(w io.Writer, limit int64) (int64, error)) (Stats, error)
}

// read fetches DIR/BASE through the target's transport into sink.
func (c *Copier) read(ctx context.Context, t Target, dir, base string, into sink) (Stats, execute.Result, error) {
	if t.Via != "" && t.Via != execute.ViaKube {
		return c.downloadExecd(ctx, t, path.Join(dir, base), into)
	}
	consume := into.tar
	pr, pw := io.Pipe()
	var st Stats
	var extErr error
	done := make(chan struct{})
	crash.Go(func() {
		defer close(done)
		st, extErr = consume(pr)
		if extErr == nil {
			_, extErr = io.Copy(io.Discard, pr) // tar pads its end; nothing more is kept
		}
		pr.CloseWithError(extErr) // a refused archive stops the stream
	})
	var stderr tail
	req := t
	req.Command, req.Stdout, req.Stderr, req.Stdin = []string{"tar", "-cf", "-", "-C", dir, base}, pw, &stderr, nil
	req.Interactive, req.ReadsOnly = false, true
	res, err := c.Exec.Run(ctx, req)
	pw.Close()
	<-done
	var ae *ArchiveError
	var le *LimitError
	refusedArchive := errors.As(extErr, &ae) || errors.As(extErr, &le)
	// tar that failed at once (no such path) sends an empty archive: its
	// own message says why, not the empty archive.
	tarFailedFirst := err == nil && res.ExitCode != 0 && st.Entries == 0
	switch {
	case err != nil && asError(err).Executed == refusal.ExecutedNo:
		return st, res, err // refused before tar was sent: nothing to extract
	case refusedArchive && !tarFailedFirst:
		return st, res, &refusal.Error{Code: CodeArchiveRefused, Executed: refusal.ExecutedNo, Err: extErr,
			Message: extErr.Error() + "; nothing of it was kept", Evidence: append(res.Evidence, stderr.evidence("tar")...)}
	case err != nil:
		return st, res, asCopyError(err, nil)
	case res.ExitCode != 0:
		return st, res, remoteFailed(res, &stderr)
	case extErr != nil:
		return st, res, &refusal.Error{Code: CodeLocal, Executed: refusal.ExecutedNo, Err: extErr, Message: extErr.Error()}
	}
	return st, res, nil
}

func remoteFailed(res execute.Result, stderr *tail) error {
	return &refusal.Error{Code: CodeRemoteFailed, Executed: refusal.ExecutedNo, Evidence: append(res.Evidence, stderr.evidence("tar")...),
		Message: fmt.Sprintf("tar exited %d in the sandbox's Pod %s; nothing was written", res.ExitCode, res.Target.Pod)}
}

// singleFile copies the archive's one regular file, named base, to w.
func singleFile(r io.Reader, w io.Writer, base string, lim Limits) (Stats, error) {
	tr := tar.NewReader(r)
	h, err := tr.Next()
	if err != nil {
		return Stats{}, &ArchiveError{Reason: "unreadable tar stream: " + err.Error()}
	}
	name, err := entryName(h.Name, base)
	if err != nil {
		return Stats{}, err
	}
	if name != base || (h.Typeflag != tar.TypeReg && h.Typeflag != tar.TypeRegA) { //nolint:staticcheck // old archives
		return Stats{}, &ArchiveError{Entry: h.Name, Reason: "standard output takes one regular file (give a local directory for anything else)"}
	}
	if h.Size > lim.MaxBytes || h.Size < 0 {
		return Stats{}, &LimitError{What: "bytes", Limit: lim.MaxBytes}
	}
	n, err := io.Copy(w, io.LimitReader(tr, h.Size))
	if err != nil {
		return Stats{Bytes: n}, err
	}
	if _, err := tr.Next(); !errors.Is(err, io.EOF) {
		return Stats{Bytes: n, Entries: 1}, &ArchiveError{Reason: "more than the one file asked for"}
	}
	return Stats{Bytes: n, Entries: 1}, nil
}

// finalPath is where a download of base lands: inside dest when dest is a
// directory, else dest itself, whose directory must exist. An existing
// directory there is never merged into.
func finalPath(dest, base string) (string, error) {
	final := dest
	if fi, err := os.Stat(dest); err == nil && fi.IsDir() {
		final = filepath.Join(dest, base)
	}
	if fi, err := os.Lstat(final); err == nil && fi.IsDir() {
		return "", fmt.Errorf("%s exists and is a directory: copies are never merged into one; remove it or name another destination", final)
	}
	if fi, err := os.Stat(filepath.Dir(final)); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s: no such directory", filepath.Dir(final))
	}
	return final, nil
}

// asCopyError reads exec's error as a copy's: Executed now says
// whether anything may have been written.
func asCopyError(err, local error) error {
	var r *refusal.Error
	if !errors.As(err, &r) {
		return &refusal.Error{Code: execute.CodeTransport, Executed: refusal.ExecutedUnknown, Message: err.Error(), Err: err}
	}
	if local != nil && r.Executed == refusal.ExecutedNo {
		r.Evidence = append(r.Evidence, model.Evidence{Kind: model.Observed, Text: "reading the local files: " + local.Error()})
	}
	return r
}

func inferredOnly(ev []model.Evidence) []model.Evidence {
	var out []model.Evidence
	for _, e := range ev {
		if e.Kind == model.Inferred {
			out = append(out, e)
		}
	}
	return out
}

// tail keeps the last bytes of a remote tool's stderr: enough to say why it
// failed, never more than a line's worth of memory per copy.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailBytes = 2048

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailBytes {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailBytes:]...)
	}
	return len(p), nil
}

func (t *tail) evidence(tool string) []model.Evidence {
	t.mu.Lock()
	defer t.mu.Unlock()
	msg := strings.TrimSpace(textsafe.Text(string(t.buf)))
	if msg == "" {
		return nil
	}
	return []model.Evidence{{Kind: model.Observed, Text: tool + " in the Pod said: " + msg}}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// spool copies r, at most limit bytes, to a temporary file readable as an
// ordinary upload (mode 0644) and returns its name.
func spool(r io.Reader, limit int64) (string, error) {
	tmp, err := os.CreateTemp("", "sandscope-cp-*")
	if err != nil {
		return "", err
	}
	n, err := io.Copy(tmp, io.LimitReader(r, limit+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > limit {
		err = &LimitError{What: "bytes", Limit: limit}
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("reading standard input: %w", err)
	}
	return tmp.Name(), nil
}

// asError returns err's refusal.Error or, when it carries none, reads it
// strictly: a TRANSPORT failure whose outcome is unknown.
func asError(err error) *refusal.Error {
	var r *refusal.Error
	if errors.As(err, &r) {
		return r
	}
	return &refusal.Error{Code: execute.CodeTransport, Executed: refusal.ExecutedUnknown, Message: err.Error(), Err: err}
}

// rootSink extracts into a staging root.
type rootSink struct {
	root *os.Root
	base string
	lim  Limits
}

func (s rootSink) tar(r io.Reader) (Stats, error) { return Extract(r, s.root, s.base, s.lim) }

func (s rootSink) file(_ context.Context, fetch func(io.Writer, int64) (int64, error)) (Stats, error) {
	f, err := s.root.OpenFile(s.base, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return Stats{}, err
	}
	n, err := fetch(f, s.lim.MaxBytes)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return Stats{Bytes: n, Entries: 1}, err
}

// spoolSink keeps one regular file for standard output.
type spoolSink struct {
	w    io.Writer
	base string
	lim  Limits
}

func (s spoolSink) tar(r io.Reader) (Stats, error) { return singleFile(r, s.w, s.base, s.lim) }

func (s spoolSink) file(_ context.Context, fetch func(io.Writer, int64) (int64, error)) (Stats, error) {
	n, err := fetch(s.w, s.lim.MaxBytes)
	return Stats{Bytes: n, Entries: 1}, err
}

// refOf names the target as the user named it.
func refOf(t Target) string {
	if t.Ref == "" && t.Sandbox != nil {
		return t.Sandbox.Name()
	}
	return t.Ref
}
