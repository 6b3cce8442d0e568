package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/wpg-dev/wpg/internal/eal"
	"github.com/wpg-dev/wpg/internal/printable"
	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/template"
)

// jobFile is a field of job.Spec that names a file the job opens.
type jobFile struct {
	field string
	path  func(*job.Spec) *string
	write bool // the job writes (or creates) it
}

var jobFiles = []jobFile{
	{"output", func(s *job.Spec) *string { return &s.Output }, true},
	{"fifo", func(s *job.Spec) *string { return &s.FIFO }, true},
	{"template", func(s *job.Spec) *string { return &s.Template }, false},
	{"pcap", func(s *job.Spec) *string { return &s.Pcap }, false},
	{"payload_file", func(s *job.Spec) *string { return &s.PayloadFile }, false},
	{"connect", func(s *job.Spec) *string { return &s.Connect }, false},
}

// dbSuffixes are the files SQLite keeps beside the database, and the
// lock the server holds on it.
var dbSuffixes = []string{"", "-wal", "-shm", "-journal", ".lock"}

// checkFiles refuses the files of spec a server job may not open: with
// Options.JobFiles, any outside that directory (a relative path is taken
// from it: spec is rewritten to name the absolute path), including the
// captures its template replays; and, always, a file it would write that
// is the server's own (its database and the files beside it, or any file
// it holds open: its log, a running job's output); with JobFiles, also
// the files its dpdk_args name (confineEAL) and its device (checkDevice).
// The template is parsed here only to find its captures, with JobFiles
// set.
func (s *Server) checkFiles(spec *job.Spec) job.Problems {
	var ps job.Problems
	for _, f := range jobFiles {
		p := f.path(spec)
		if *p == "" {
			continue
		}
		if s.opt.JobFiles != "" {
			abs, ok := s.confine(*p)
			if !ok {
				ps = append(ps, s.outside(f.field, *p))
				continue
			}
			*p = abs
		}
		if f.write {
			if what := s.ownFile(*p); what != "" {
				ps = append(ps, &job.OptionError{Field: f.field, Value: *p, Reason: "is " + what + ": writing a job's frames into it would destroy it",
					Fix: "give {" + f.field + "} a file of its own, e.g. " + filepath.Join(filepath.Dir(*p), "out.pcap")})
			}
		}
	}
	if s.opt.JobFiles != "" {
		if p := s.confineEAL(spec); p != nil {
			ps = append(ps, p)
		}
		if p := checkDevice(spec.Device); p != nil {
			ps = append(ps, p)
		}
	}
	if s.opt.JobFiles == "" || ps != nil || (spec.Template == "" && spec.TemplateText == "") {
		return ps
	}
	var t *template.Spec
	var err error
	if spec.TemplateText != "" {
		t, err = template.Parse("template", []byte(spec.TemplateText))
	} else {
		t, err = template.Load(spec.Template)
	}
	if err != nil {
		return nil // job.Validate says what is wrong with it
	}
	return s.checkReplays(t)
}

// checkReplays refuses, with Options.JobFiles, the captures of t's streams
// outside that directory (nil without JobFiles): the job and the preview
// would read them.
func (s *Server) checkReplays(t *template.Spec) job.Problems {
	if s.opt.JobFiles == "" {
		return nil
	}
	var ps job.Problems
	for i, st := range t.Streams {
		if st.Replay == nil {
			continue
		}
		if _, ok := s.confine(st.Replay.File); !ok {
			e := s.outside("template", st.Replay.File)
			e.Reason = fmt.Sprintf("stream %d (%s) replays %s: it %s", i, printable.Escape(st.Name), strconv.Quote(st.Replay.File), e.Reason)
			ps = append(ps, e)
		}
	}
	return ps
}

// confineEAL confines, with Options.JobFiles, the files spec's dpdk_args
// name (internal/eal: a --vdev's captures, sockets and programs,
// --trace-dir, --huge-dir) to that directory as checkFiles does the
// others (a relative one is taken from it: spec is rewritten), and
// refuses what the check cannot follow: -d (a driver the EAL would load
// and run), a --file-prefix with a path in it, an option it does not
// know.
func (s *Server) confineEAL(spec *job.Spec) *job.OptionError {
	if spec.DPDKArgs == "" {
		return nil
	}
	args, err := eal.Confine(strings.Fields(spec.DPDKArgs), func(p eal.Path) (string, *eal.Error) {
		abs, ok := s.confine(p.Path)
		if !ok {
			o := s.outside("dpdk_args", p.Path)
			return "", &eal.Error{Reason: "names " + strconv.Quote(p.Path) + ", " + strings.TrimPrefix(o.Reason, "is "), Fix: o.Fix}
		}
		return abs, nil
	})
	var e *eal.Error
	if errors.As(err, &e) {
		return &job.OptionError{Field: "dpdk_args", Value: e.Arg, Reason: e.Reason, Fix: e.Fix}
	}
	spec.DPDKArgs = strings.Join(args, " ")
	return nil
}

// checkDevice refuses, with Options.JobFiles, a device (udmabuf) that is
// not a character device node under /dev once its symlinks are resolved
// (one that does not exist there yet is the backend's to name): the
// backend maps the file it names and writes frames into it.
func checkDevice(device string) *job.OptionError {
	if device == "" {
		return nil
	}
	ok := filepath.IsAbs(device) && !slices.Contains(strings.Split(device, "/"), "..")
	if ok {
		real := realPath(device)
		fi, err := os.Stat(real)
		ok = strings.HasPrefix(real, "/dev/") && (errors.Is(err, fs.ErrNotExist) || (err == nil && fi.Mode()&fs.ModeCharDevice != 0))
	}
	if ok {
		return nil
	}
	return &job.OptionError{Field: "device", Value: device,
		Reason: "is not a character device under /dev: with a job files directory (server.job_files) a job's device must be a DMA buffer's node",
		Fix:    "give the node, e.g. /dev/udmabuf0 (u-dma-buf) or /dev/udmabuf (mainline)"}
}

// outside is the problem of a file outside Options.JobFiles.
func (s *Server) outside(field, path string) *job.OptionError {
	return &job.OptionError{Field: field, Value: path,
		Reason: "is outside the job files directory " + s.opt.JobFiles + " (server.job_files): a job of this server opens files only there",
		Fix:    "give a path in " + s.opt.JobFiles + ", e.g. " + filepath.Join(s.opt.JobFiles, filepath.Base(path)) + " (a relative path is taken from it)"}
}

// confine returns path as an absolute path in Options.JobFiles (a
// relative one is taken from it), and whether it lies there once its
// symlinks are resolved. A path with a ".." in it is refused: the kernel
// resolves "link/.." through the link, a lexical check would not.
func (s *Server) confine(path string) (string, bool) {
	if slices.Contains(strings.Split(filepath.ToSlash(path), "/"), "..") {
		return "", false
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(s.opt.JobFiles, path)
	}
	path = filepath.Clean(path)
	rel, err := filepath.Rel(s.jobFilesReal, realPath(path))
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return path, true
}

// realPath resolves the symlinks of the longest leading part of path that
// exists and appends the rest as written.
func realPath(path string) string {
	p, rest := filepath.Clean(path), ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// ownFile says what path is when it is one of the server's own files: its
// database (by name or by identity: a link to it), the files SQLite keeps
// beside it, its lock, a running job's output, or another file the
// process holds open (/proc/self/fd: its log); "" when none.
func (s *Server) ownFile(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	real := realPath(abs)
	fi, statErr := os.Stat(real)
	for _, suf := range dbSuffixes {
		name := s.dbReal + suf
		if real == name {
			return "the server's job database (" + name + ")"
		}
		if statErr == nil {
			if di, err := os.Stat(name); err == nil && os.SameFile(fi, di) {
				return "the server's job database (" + name + ")"
			}
		}
	}
	s.mu.Lock()
	for _, m := range []map[int64]*entry{s.running, s.pending} {
		for id, e := range m {
			if e.spec.Output == "" {
				continue
			}
			out, err := filepath.Abs(e.spec.Output)
			if err != nil {
				continue
			}
			oi, err := os.Stat(out)
			if realPath(out) == real || (statErr == nil && err == nil && os.SameFile(fi, oi)) {
				s.mu.Unlock()
				return fmt.Sprintf("a file this server holds open (the output of running job %d)", id)
			}
		}
	}
	s.mu.Unlock()
	if statErr != nil || !fi.Mode().IsRegular() {
		return ""
	}
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		if oi, err := os.Stat("/proc/self/fd/" + fd.Name()); err == nil && oi.Mode().IsRegular() && os.SameFile(fi, oi) {
			return "a file this server holds open (its log, or a file of a running job)"
		}
	}
	return ""
}
