package files

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/sandscope/sandscope/internal/textsafe"
)

// Limits bound what a download may write. An archive from a sandbox is
// sandbox code's output: without a bound it can fill the operator's disk.
type Limits struct {
	// MaxBytes bounds the sum of the regular files' sizes.
	MaxBytes int64
	// MaxEntries bounds the number of entries (files, directories, links).
	MaxEntries int
}

// DefaultLimits are generous: a sandbox's working directory, not a disk.
var DefaultLimits = Limits{MaxBytes: 4 << 30, MaxEntries: 100_000}

func (l Limits) orDefault() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultLimits.MaxBytes
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultLimits.MaxEntries
	}
	return l
}

// maxNameBytes bounds one entry's name (PATH_MAX): a longer one is no file
// the operator asked for.
const maxNameBytes = 4096

// ArchiveError is an archive refused by the rules of Extract. Its message
// names the entry through textsafe: the names are the sandbox's.
type ArchiveError struct {
	Entry  string
	Reason string
}

func (e *ArchiveError) Error() string {
	if e.Entry == "" {
		return "archive refused: " + e.Reason
	}
	return fmt.Sprintf("archive refused at entry %q: %s", textsafe.Line(e.Entry), e.Reason)
}

// LimitError is an archive that exceeded a Limit.
type LimitError struct {
	What  string // "bytes" or "entries"
	Limit int64
}

func (e *LimitError) Error() string {
	flag := "--max-bytes"
	if e.What == "entries" {
		flag = "--max-entries"
	}
	return fmt.Sprintf("archive refused: more than %d %s (%s)", e.Limit, e.What, flag)
}

// Stats count what an extraction wrote.
type Stats struct {
	Bytes   int64
	Entries int
}

// Extract reads a tar stream into root, a fresh directory nothing else
// writes to, and accepts only entries named top or under top/. It refuses
// the whole archive (and the caller removes root) on:
//   - a name that is absolute, climbs with "..", or is not under top;
//   - a symlink whose target is absolute or leaves root, judged from where
//     the link stands;
//   - an entry whose path goes through a symlink, or that names an existing
//     symlink (a link planted to be written through);
//   - a hard link to anything but a regular file this archive wrote;
//   - a device, FIFO or any type other than file, directory and link;
//   - more than the limits' bytes or entries.
//
// Set-uid, set-gid and sticky bits are dropped; owners are not restored.
// os.Root backs every write, so even a rule missed here cannot write
// outside root.
func Extract(r io.Reader, root *os.Root, top string, lim Limits) (Stats, error) {
	lim = lim.orDefault()
	var st Stats
	links := map[string]bool{}   // symlinks this archive made
	regular := map[string]bool{} // regular files this archive wrote
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return st, &ArchiveError{Reason: "unreadable tar stream: " + err.Error()}
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		name, err := entryName(h.Name, top)
		if err != nil {
			return st, err
		}
		if st.Entries++; st.Entries > lim.MaxEntries {
			return st, &LimitError{What: "entries", Limit: int64(lim.MaxEntries)}
		}
		if p := throughLink(name, links); p != "" {
			return st, &ArchiveError{Entry: h.Name, Reason: fmt.Sprintf("goes through the symlink %q the archive made", textsafe.Line(p))}
		}
		if err := ensureParent(root, name); err != nil {
			return st, &ArchiveError{Entry: h.Name, Reason: err.Error()}
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if fi, err := root.Lstat(name); err == nil && fi.IsDir() {
				continue
			}
			if err := root.Mkdir(name, dirMode(h.Mode)); err != nil {
				return st, &ArchiveError{Entry: h.Name, Reason: err.Error()}
			}
		case tar.TypeReg, tar.TypeRegA: //nolint:staticcheck // old archives still use TypeRegA
			if st.Bytes+h.Size > lim.MaxBytes || h.Size < 0 {
				return st, &LimitError{What: "bytes", Limit: lim.MaxBytes}
			}
			n, err := writeFile(root, name, fileMode(h.Mode), tr, h.Size)
			st.Bytes += n
			if err != nil {
				return st, &ArchiveError{Entry: h.Name, Reason: err.Error()}
			}
			regular[name] = true
		case tar.TypeSymlink:
			if err := linkTargetInside(name, h.Linkname); err != nil {
				return st, &ArchiveError{Entry: h.Name, Reason: err.Error()}
			}
			if _, err := root.Lstat(name); err == nil {
				return st, &ArchiveError{Entry: h.Name, Reason: "a symlink over an entry the archive already wrote"}
			}
			if err := root.Symlink(h.Linkname, name); err != nil {
				return st, &ArchiveError{Entry: h.Name, Reason: err.Error()}
			}
			links[name] = true
		case tar.TypeLink:
			target, err := entryName(h.Linkname, top)
			if err != nil {
				return st, &ArchiveError{Entry: h.Name, Reason: "hard link to " + err.Error()}
			}
			if !regular[target] {
				return st, &ArchiveError{Entry: h.Name, Reason: fmt.Sprintf("hard link to %q, which is not a file this archive wrote", textsafe.Line(h.Linkname))}
			}
			if _, err := root.Lstat(name); err == nil {
				return st, &ArchiveError{Entry: h.Name, Reason: "a hard link over an entry the archive already wrote"}
			}
			if err := root.Link(target, name); err != nil {
				return st, &ArchiveError{Entry: h.Name, Reason: err.Error()}
			}
			regular[name] = true
		default:
			return st, &ArchiveError{Entry: h.Name, Reason: fmt.Sprintf("entry type %s is never extracted (only files, directories and links)", typeName(h.Typeflag))}
		}
	}
	if st.Entries == 0 {
		return st, &ArchiveError{Reason: "the archive is empty"}
	}
	return st, nil
}

// entryName cleans an archive name and requires it to be top or under it.
func entryName(raw, top string) (string, error) {
	if len(raw) > maxNameBytes {
		return "", &ArchiveError{Entry: raw[:64] + "…", Reason: fmt.Sprintf("a name longer than %d bytes", maxNameBytes)}
	}
	if strings.ContainsRune(raw, 0) {
		return "", &ArchiveError{Entry: raw, Reason: "a name with a NUL byte"}
	}
	if path.IsAbs(raw) {
		return "", &ArchiveError{Entry: raw, Reason: "an absolute name"}
	}
	for part := range strings.SplitSeq(raw, "/") {
		if part == ".." {
			return "", &ArchiveError{Entry: raw, Reason: `a name that climbs with ".."`}
		}
	}
	name := path.Clean(raw)
	if name != top && !strings.HasPrefix(name, top+"/") {
		return "", &ArchiveError{Entry: raw, Reason: fmt.Sprintf("not under %q, what was asked for", textsafe.Line(top))}
	}
	return name, nil
}

// throughLink returns the first proper prefix of name that is a symlink the
// archive made, or "".
func throughLink(name string, links map[string]bool) string {
	for i := range len(name) {
		if name[i] == '/' && links[name[:i]] {
			return name[:i]
		}
	}
	return ""
}

// linkTargetInside requires a symlink at name to point inside the root,
// judged lexically from the link's directory. Sound because no entry may go
// through a symlink (throughLink): every directory on name's path is real.
func linkTargetInside(name, target string) error {
	switch {
	case target == "":
		return errors.New("a symlink with no target")
	case path.IsAbs(target):
		return fmt.Errorf("a symlink to the absolute path %q", textsafe.Line(target))
	}
	if rel := path.Join(path.Dir(name), target); rel == ".." || strings.HasPrefix(rel, "../") {
		return fmt.Errorf("a symlink to %q, outside the destination", textsafe.Line(target))
	}
	return nil
}

// ensureParent makes the directories above name that the archive did not
// list (tar streams may omit them).
func ensureParent(root *os.Root, name string) error {
	dir := path.Dir(name)
	if dir == "." {
		return nil
	}
	return root.MkdirAll(dir, 0o755)
}

func writeFile(root *os.Root, name string, mode fs.FileMode, r io.Reader, size int64) (int64, error) {
	if fi, err := root.Lstat(name); err == nil && !fi.Mode().IsRegular() {
		return 0, errors.New("a file over an entry of another kind the archive already wrote")
	}
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, io.LimitReader(r, size))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n < size {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// fileMode keeps the permission bits only: no set-uid, set-gid or sticky
// bit from a sandbox reaches the operator's disk.
func fileMode(m int64) fs.FileMode { return fs.FileMode(m) & fs.ModePerm }

// dirMode is like fileMode, and the owner can always enter and write, so
// the rest of the archive can be extracted and the copy removed.
func dirMode(m int64) fs.FileMode { return fs.FileMode(m)&fs.ModePerm | 0o700 }

func typeName(t byte) string {
	switch t {
	case tar.TypeChar:
		return "character device"
	case tar.TypeBlock:
		return "block device"
	case tar.TypeFifo:
		return "FIFO"
	case tar.TypeGNUSparse:
		return "sparse file"
	}
	return fmt.Sprintf("%q", t)
}
