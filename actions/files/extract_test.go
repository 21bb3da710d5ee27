package files

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// entry is one tar entry of a test archive.
type entry struct {
	name, link string
	typ        byte
	mode       int64
	body       string
}

func archiveOf(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		mode := e.mode
		if mode == 0 {
			mode = 0o644
		}
		h := &tar.Header{Name: e.name, Linkname: e.link, Typeflag: typ, Mode: mode, Size: int64(len(e.body))}
		if typ != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			_, _ = io.WriteString(tw, e.body)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// naiveExtract is what kubectl cp did before its CVE fixes: join the name
// to the destination, follow whatever is there. The hostile archives below
// must escape it, or they test nothing.
func naiveExtract(r io.Reader, dest string) {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err != nil {
			return
		}
		p := filepath.Join(dest, h.Name)
		if filepath.IsAbs(h.Name) {
			p = h.Name
		}
		_ = os.MkdirAll(filepath.Dir(p), 0o755) // best effort, as the naive extractor was: a failed step is skipped
		switch h.Typeflag {
		case tar.TypeDir:
			_ = os.MkdirAll(p, 0o755)
		case tar.TypeSymlink:
			_ = os.Symlink(h.Linkname, p)
		case tar.TypeLink:
			_ = os.Link(filepath.Join(dest, h.Linkname), p)
		case tar.TypeFifo:
			_ = syscall.Mkfifo(p, 0o644)
		case tar.TypeChar:
			_ = syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|3) // /dev/null's numbers; needs root
		default:
			if f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, os.FileMode(h.Mode)); err == nil {
				_, _ = io.Copy(f, tr)
				f.Close()
				_ = os.Chmod(p, os.FileMode(h.Mode)&fs.ModePerm|modeBits(h.Mode))
			}
		}
	}
}

func modeBits(m int64) fs.FileMode {
	var out fs.FileMode
	if m&0o4000 != 0 {
		out |= fs.ModeSetuid
	}
	return out
}

// layout is a temporary tree: outside/ (what must stay untouched, with a
// victim file) and dest/ (where the copy goes).
type layout struct {
	outside, dest, victim string
}

func newLayout(t *testing.T) layout {
	base := t.TempDir()
	l := layout{outside: filepath.Join(base, "outside"), dest: filepath.Join(base, "outside", "work", "dest")}
	l.victim = filepath.Join(l.outside, "victim")
	if err := os.MkdirAll(l.dest, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.victim, []byte("original"), 0o644); err != nil {
		t.Fatal(err)
	}
	return l
}

// harmed reports what a copy into l.dest did outside it.
func (l layout) harmed(t *testing.T) string {
	t.Helper()
	var what []string
	if b, err := os.ReadFile(l.victim); err != nil || string(b) != "original" {
		what = append(what, "victim changed")
	}
	_ = filepath.WalkDir(l.outside, func(p string, d fs.DirEntry, err error) error { // the callbacks swallow errors: WalkDir returns nil
		if err != nil || strings.HasPrefix(p, l.dest) || p == l.outside || p == l.victim || p == filepath.Dir(l.dest) {
			return nil
		}
		what = append(what, "new "+p)
		return nil
	})
	_ = filepath.WalkDir(l.dest, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		fi, err := os.Lstat(p)
		if err == nil && fi.Mode()&(fs.ModeNamedPipe|fs.ModeDevice|fs.ModeCharDevice|fs.ModeSetuid) != 0 {
			what = append(what, "special "+p)
		}
		if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			if to, err := filepath.EvalSymlinks(p); err != nil || !strings.HasPrefix(to, l.dest) {
				what = append(what, "link out "+p)
			}
		}
		return nil
	})
	return strings.Join(what, ", ")
}

func TestExtractRefusesHostileArchives(t *testing.T) {
	cases := map[string][]entry{
		"climbs with ..": {{name: "top/", typ: tar.TypeDir}, {name: "top/../../../victim", body: "pwned"}},
		"absolute name":  {{name: "top/x", body: "ok"}, {name: "/ABS/victim", body: "pwned"}},
		"symlink out, then written through": {
			{name: "top/", typ: tar.TypeDir},
			{name: "top/l", typ: tar.TypeSymlink, link: "../../../victim"},
			{name: "top/l", body: "pwned"},
		},
		"absolute symlink, then a file under it": {
			{name: "top/", typ: tar.TypeDir},
			{name: "top/d", typ: tar.TypeSymlink, link: "/OUTSIDE"},
			{name: "top/d/planted", body: "pwned"},
		},
		"symlink inside that a later path goes through": {
			{name: "top/sub/", typ: tar.TypeDir},
			{name: "top/here", typ: tar.TypeSymlink, link: "."},
			{name: "top/here/sub/up", typ: tar.TypeSymlink, link: "../../../victim"},
		},
		"hard link out": {
			{name: "top/", typ: tar.TypeDir},
			{name: "top/h", typ: tar.TypeLink, link: "../../victim"},
			{name: "top/h", body: "pwned"},
		},
		"fifo":          {{name: "top/", typ: tar.TypeDir}, {name: "top/pipe", typ: tar.TypeFifo}},
		"char device":   {{name: "top/", typ: tar.TypeDir}, {name: "top/null", typ: tar.TypeChar}},
		"not under top": {{name: "top/a", body: "ok"}, {name: "other/b", body: "stray"}},
	}
	for name, entries := range cases {
		t.Run(name, func(t *testing.T) {
			// The archives as written above name the layout's paths by
			// placeholders: the real ones are known only now.
			archiveFor := func(l layout) []byte {
				es := slices.Clone(entries)
				for i := range es {
					es[i].name = strings.ReplaceAll(es[i].name, "/ABS/victim", l.victim)
					es[i].link = strings.ReplaceAll(es[i].link, "/OUTSIDE", l.outside)
				}
				return archiveOf(t, es...)
			}
			naive := newLayout(t)
			naiveExtract(bytes.NewReader(archiveFor(naive)), naive.dest)
			naiveHarm := naive.harmed(t)
			if naiveHarm == "" && name == "char device" && os.Geteuid() != 0 {
				t.Skip("only root makes a device node: the naive extractor cannot be shown harmed")
			}
			if naiveHarm == "" && name != "not under top" {
				t.Fatalf("the archive does not harm a naive extractor: the case tests nothing")
			}

			l := newLayout(t)
			data := archiveFor(l)
			root, err := os.OpenRoot(l.dest)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			_, err = Extract(bytes.NewReader(data), root, "top", Limits{})
			var ae *ArchiveError
			if !errors.As(err, &ae) {
				t.Fatalf("Extract: %v, want an ArchiveError (naive extractor: %s)", err, naiveHarm)
			}
			if harm := l.harmed(t); harm != "" {
				t.Errorf("Extract refused (%v) but harmed the machine: %s", err, harm)
			}
		})
	}
}

func TestExtractLimits(t *testing.T) {
	big := archiveOf(t, entry{name: "top/a", body: strings.Repeat("x", 100)}, entry{name: "top/b", body: strings.Repeat("y", 100)})
	many := archiveOf(t, entry{name: "top/", typ: tar.TypeDir}, entry{name: "top/1"}, entry{name: "top/2"}, entry{name: "top/3"})
	for name, tc := range map[string]struct {
		data []byte
		lim  Limits
		what string
	}{
		"bytes":   {big, Limits{MaxBytes: 150}, "bytes"},
		"entries": {many, Limits{MaxEntries: 3}, "entries"},
	} {
		t.Run(name, func(t *testing.T) {
			root, err := os.OpenRoot(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			_, err = Extract(bytes.NewReader(tc.data), root, "top", tc.lim)
			var le *LimitError
			if !errors.As(err, &le) || le.What != tc.what || !strings.Contains(err.Error(), "--max-"+tc.what) {
				t.Fatalf("got %v, want a %s limit error naming its flag", err, tc.what)
			}
		})
	}
}

// What a sandbox may legitimately send comes out whole: nested directories,
// a link inside, a hard link to a file it wrote; set-uid bits dropped.
func TestExtractKeepsAnOrdinaryTree(t *testing.T) {
	data := archiveOf(t,
		entry{name: "top/", typ: tar.TypeDir, mode: 0o755},
		entry{name: "top/bin/run", body: "#!/bin/sh\n", mode: 0o4755},
		entry{name: "top/data/pi.txt", body: "3.14159"},
		entry{name: "top/latest", typ: tar.TypeSymlink, link: "data/pi.txt"},
		entry{name: "top/copy", typ: tar.TypeLink, link: "top/data/pi.txt"},
	)
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	st, err := Extract(bytes.NewReader(data), root, "top", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Entries != 5 || st.Bytes != int64(len("#!/bin/sh\n")+len("3.14159")) {
		t.Errorf("stats %+v", st)
	}
	for _, p := range []string{"top/latest", "top/copy"} {
		if b, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(b) != "3.14159" {
			t.Errorf("%s: %q %v", p, b, err)
		}
	}
	fi, err := os.Stat(filepath.Join(dir, "top/bin/run"))
	if err != nil || fi.Mode()&fs.ModeSetuid != 0 || fi.Mode().Perm() != 0o755 {
		t.Errorf("run: mode %v %v, want 0755 without set-uid", fi.Mode(), err)
	}
}

func TestParseLocation(t *testing.T) {
	for in, want := range map[string]Location{
		"sbx-a:/tmp/x":     {Ref: "sbx-a", Path: "/tmp/x", Remote: true},
		"pod/sbx-a-0:/tmp": {Ref: "pod/sbx-a-0", Path: "/tmp", Remote: true},
		":/work/in":        {Path: "/work/in", Remote: true},
		"./a:b":            {Path: "./a:b"},
		"/abs/with:colon":  {Path: "/abs/with:colon"},
		"local.txt":        {Path: "local.txt"},
		"-":                {Path: "-"},
	} {
		got, err := ParseLocation(in)
		if err != nil || got != want {
			t.Errorf("%q: %+v %v, want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "ns/sbx:/x", "sbx:"} {
		if _, err := ParseLocation(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
