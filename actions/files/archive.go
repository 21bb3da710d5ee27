package files

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// writeArchive writes src (a local file or directory, symlinks kept as
// symlinks) as a tar stream whose entries are named top and top/...: the
// operator's own files, so only what tar cannot carry is refused.
func writeArchive(w io.Writer, src, top string) (Stats, error) {
	var st Stats
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		name := top
		if rel != "." {
			name = path.Join(top, filepath.ToSlash(rel))
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		}
		if !fi.Mode().IsRegular() && !fi.IsDir() && link == "" {
			return fmt.Errorf("%s: only files, directories and symlinks are copied", p)
		}
		h, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		h.Name, h.Uname, h.Gname = name, "", ""
		if fi.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		st.Entries++
		if !fi.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		n, err := io.Copy(tw, io.LimitReader(f, fi.Size()))
		st.Bytes += n
		return err
	})
	if err != nil {
		return st, err
	}
	return st, tw.Close()
}
