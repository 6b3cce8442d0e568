package vm

import (
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
)

// File modes of cpio entries (the S_IF* bits of the newc header).
const (
	modeDir  = 0o040000
	modeReg  = 0o100000
	modeChr  = 0o020000
	modeLink = 0o120000
)

// Entry is one file of an initramfs: a directory, a regular file (Data),
// a symbolic link (Link) or a character device (Chr with Major, Minor).
type Entry struct {
	Path         string // absolute guest path, e.g. /bin/wpg
	Mode         uint32 // permission bits, e.g. 0o755
	Dir          bool
	Data         []byte
	Link         string
	Chr          bool
	Major, Minor uint32
}

// WriteCPIO writes entries as a newc ("070701") archive, the format the
// kernel unpacks into its initramfs: parents before children (missing
// parent directories are added), every header and body padded to four
// bytes, owned by root, ended by the TRAILER!!! entry.
func WriteCPIO(w io.Writer, entries []Entry) error {
	all := map[string]Entry{}
	for _, e := range entries {
		p := path.Clean("/" + e.Path)
		if p == "/" {
			return fmt.Errorf("cpio: entry with an empty path")
		}
		if _, dup := all[p]; dup {
			return fmt.Errorf("cpio: %s given twice", p)
		}
		e.Path = p
		all[p] = e
		for d := path.Dir(p); d != "/"; d = path.Dir(d) {
			if _, ok := all[d]; !ok {
				all[d] = Entry{Path: d, Dir: true, Mode: 0o755}
			}
		}
	}
	names := make([]string, 0, len(all))
	for p := range all {
		names = append(names, p)
	}
	sort.Strings(names) // a parent sorts before its children
	ino := uint32(1)
	for _, p := range names {
		e := all[p]
		if existing, ok := all[path.Dir(p)]; ok && !existing.Dir {
			return fmt.Errorf("cpio: %s is inside %s, which is not a directory", p, path.Dir(p))
		}
		mode, body := e.Mode&0o7777, e.Data
		switch {
		case e.Dir:
			mode |= modeDir
			body = nil
		case e.Link != "":
			mode |= modeLink
			body = []byte(e.Link)
		case e.Chr:
			mode |= modeChr
			body = nil
		default:
			mode |= modeReg
		}
		nlink := uint32(1)
		if e.Dir {
			nlink = 2
		}
		var rmaj, rmin uint32
		if e.Chr {
			rmaj, rmin = e.Major, e.Minor
		}
		if err := writeEntry(w, ino, mode, nlink, rmaj, rmin, strings.TrimPrefix(p, "/"), body); err != nil {
			return err
		}
		ino++
	}
	return writeEntry(w, 0, 0, 1, 0, 0, "TRAILER!!!", nil)
}

func writeEntry(w io.Writer, ino, mode, nlink, rmaj, rmin uint32, name string, body []byte) error {
	// magic, ino, mode, uid, gid, nlink, mtime, filesize, devmajor,
	// devminor, rdevmajor, rdevminor, namesize (with its NUL), check.
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		ino, mode, 0, 0, nlink, 0, len(body), 0, 0, rmaj, rmin, len(name)+1, 0)
	buf := make([]byte, 0, len(hdr)+len(name)+4)
	buf = append(buf, hdr...)
	buf = append(buf, name...)
	buf = append(buf, 0)
	buf = pad4(buf)
	if _, err := w.Write(buf); err != nil {
		return err
	}
	if len(body) == 0 {
		return nil
	}
	if _, err := w.Write(body); err != nil {
		return err
	}
	if n := len(body) % 4; n != 0 {
		_, err := w.Write(make([]byte, 4-n))
		return err
	}
	return nil
}

func pad4(b []byte) []byte {
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}
