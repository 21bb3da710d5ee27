package files

import (
	"fmt"
	"path"
	"strings"
)

// Location is one side of a copy, in kubectl cp's syntax: SANDBOX:/path,
// pod/NAME:/path, :/path (every target of a fan-out), a local path, or "-"
// (standard input or output).
type Location struct {
	// Ref is the sandbox (or pod/NAME) of a remote location; "" with
	// Remote set means "each target" of a fan-out.
	Ref    string
	Path   string
	Remote bool
}

// Stdio reports whether the location is "-".
func (l Location) Stdio() bool { return !l.Remote && l.Path == "-" }

func (l Location) String() string {
	if l.Remote {
		return l.Ref + ":" + l.Path
	}
	return l.Path
}

// ParseLocation reads one argument. A path that starts with "/" or "." is
// local even with a colon in it (kubectl's rule), so ./a:b is a file.
func ParseLocation(s string) (Location, error) {
	if s == "" {
		return Location{}, fmt.Errorf("an empty path")
	}
	ref, p, ok := strings.Cut(s, ":")
	if !ok || strings.HasPrefix(s, "/") || strings.HasPrefix(s, ".") {
		return Location{Path: s}, nil
	}
	if strings.Contains(ref, "/") && !strings.HasPrefix(ref, "pod/") {
		return Location{}, fmt.Errorf("%q: a sandbox is SANDBOX:/path or pod/NAME:/path (the namespace goes in -n)", s)
	}
	if p == "" {
		return Location{}, fmt.Errorf("%q: no path after the colon", s)
	}
	return Location{Ref: ref, Path: p, Remote: true}, nil
}

// remotePath checks a path in the container: absolute, so that no working
// directory decides where it lands, and naming something below "/".
func remotePath(p string) (dir, base string, err error) {
	if !path.IsAbs(p) {
		return "", "", fmt.Errorf("the path in the sandbox must be absolute, got %q", p)
	}
	clean := path.Clean(p)
	if clean == "/" {
		return "", "", fmt.Errorf("copying the sandbox's whole root %q is not supported: name a directory", p)
	}
	return path.Dir(clean), path.Base(clean), nil
}
