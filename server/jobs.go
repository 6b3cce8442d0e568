package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wpg-dev/wpg/engine"
	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/report"
	"github.com/wpg-dev/wpg/sysinfo"
)

// entry is a job this process started.
type entry struct {
	id        int64
	name      string
	startedBy string
	client    string
	spec      job.Spec
	cores     []int
	created   time.Time
	run       *job.Run
	stopAsked atomic.Bool
	// unstored says why the job's end is not in the database yet (nil:
	// running, or stored): the job reads running, as the database has it,
	// until the retries store it.
	unstored atomic.Pointer[string]

	// Set once the run has ended (before done is closed).
	final  *JobRecord
	report *report.Report
	done   chan struct{}

	// The latest snapshot, taken once per SnapshotInterval by monitor and
	// shared by every event stream of the job: its JSON, its number (from
	// 1), and a channel closed when a newer one replaces it.
	snapMu   sync.Mutex
	snapJSON []byte
	snapN    int
	snapNext chan struct{}
}

// publish makes v the job's latest snapshot and wakes its streams.
func (e *entry) publish(v SnapshotView) {
	data, err := json.Marshal(v)
	if err != nil {
		return
	}
	e.snapMu.Lock()
	e.snapJSON = data
	e.snapN++
	old := e.snapNext
	e.snapNext = make(chan struct{})
	e.snapMu.Unlock()
	if old != nil {
		close(old)
	}
}

// latest returns the job's latest snapshot (nil before the first), its
// number, and a channel closed when the next one is published.
func (e *entry) latest() ([]byte, int, <-chan struct{}) {
	e.snapMu.Lock()
	defer e.snapMu.Unlock()
	if e.snapNext == nil {
		e.snapNext = make(chan struct{})
	}
	return e.snapJSON, e.snapN, e.snapNext
}

// Creator says who asked for a job: the name they gave and the address
// the request came from.
type Creator struct {
	Name      string // the job's label
	StartedBy string
	Client    string
}

// ConflictError is a job refused because a running job holds one of its
// CPUs (409).
type ConflictError struct {
	Job   int64 // the running job (0: none holds a CPU the job needs)
	Cores []int // the CPUs both want
	// AutoPin is set for an auto_pin job that found fewer free CPUs than
	// workers: Workers it needs, Free the CPUs no running job holds,
	// Allowed all this server may use, Holders the jobs holding the rest.
	AutoPin       bool
	Workers       int
	Free, Allowed []int
	Holders       []int64
}

func (e *ConflictError) Error() string {
	reason, fix := e.parts()
	return reason + ": " + fix
}

// body is the API's 409 for e.
func (e *ConflictError) body() ErrorBody {
	reason, fix := e.parts()
	b := apiError(reason, fix, e.Job)
	b.Errors[0].Field = "cores"
	if e.AutoPin {
		b.Errors[0].Field = "auto_pin"
	}
	b.Error = reason + ": " + fix // the field is in the reason
	return b
}

// parts is what is wrong and what to do.
func (e *ConflictError) parts() (reason, fix string) {
	if !e.AutoPin {
		return fmt.Sprintf("cores %s are held by running job %d", job.FormatCPUList(e.Cores), e.Job), fmt.Sprintf("choose other cores, or stop job %d first", e.Job)
	}
	if len(e.Allowed) < e.Workers {
		return fmt.Sprintf("auto_pin: %d workers need %d CPUs, and this server may use %d (%s)", e.Workers, e.Workers, len(e.Allowed), job.FormatCPUList(e.Allowed)), fmt.Sprintf("give workers %d or fewer", len(e.Allowed))
	}
	jobs := make([]string, len(e.Holders))
	for i, id := range e.Holders {
		jobs[i] = strconv.FormatInt(id, 10)
	}
	free := "none"
	if len(e.Free) > 0 {
		free = job.FormatCPUList(e.Free)
	}
	fix = fmt.Sprintf("stop job %s first", strings.Join(jobs, " or "))
	if len(e.Free) > 0 {
		fix = fmt.Sprintf("give workers %d or fewer, or %s", len(e.Free), fix)
	}
	return fmt.Sprintf("auto_pin: %d workers need %d CPUs no running job holds, and %d are free (%s; cores %s are held by running job %s)",
		e.Workers, e.Workers, len(e.Free), free, job.FormatCPUList(e.Cores), strings.Join(jobs, ", ")), fix
}

// errClosing refuses a job while the server shuts down (503).
var errClosing = errors.New("the server is shutting down")

// env is the job environment: no standard streams.
func (s *Server) env() job.Env {
	return job.Env{Logger: s.log, Launcher: s.opt.Launcher}
}

// heldLocked returns the CPUs running and starting jobs hold.
func (s *Server) heldLocked() map[int]int64 {
	held := map[int]int64{}
	for _, m := range []map[int64]*entry{s.running, s.pending} {
		for id, e := range m {
			for _, c := range e.cores {
				held[c] = id
			}
		}
	}
	return held
}

// resolveCores returns the CPUs spec pins its workers to (nil: none), with
// auto_pin resolved to CPUs no running job holds (and spec rewritten to
// name them).
func (s *Server) resolveCoresLocked(spec *job.Spec) ([]int, error) {
	held := s.heldLocked()
	switch {
	case spec.Cores != "" && !spec.AutoPin:
		list, err := sysinfo.ParseCPUList(spec.Cores)
		if err != nil {
			return nil, nil // Validate names the problem
		}
		// Every core it names counts, for the check and as held: docs/api.md
		// says a job naming a held core is refused (only the first
		// worker-count ones were checked).
		conflict := &ConflictError{}
		for _, c := range list {
			if id, ok := held[c]; ok {
				conflict.Job = id
				conflict.Cores = append(conflict.Cores, c)
			}
		}
		if conflict.Cores != nil {
			return nil, conflict
		}
		return list, nil
	case spec.AutoPin && spec.Cores == "":
		allowed, err := sys.AllowedCPUs()
		if err != nil {
			return nil, err
		}
		free := slices.DeleteFunc(slices.Clone(allowed), func(c int) bool { _, ok := held[c]; return ok })
		if len(free) < spec.Workers {
			e := &ConflictError{AutoPin: true, Workers: spec.Workers, Free: free, Allowed: allowed}
			for _, c := range allowed {
				if id, ok := held[c]; ok {
					e.Cores = append(e.Cores, c)
					if !slices.Contains(e.Holders, id) {
						e.Holders = append(e.Holders, id)
					}
				}
			}
			slices.Sort(e.Holders)
			if len(e.Holders) > 0 {
				e.Job = e.Holders[0]
			}
			return nil, e
		}
		var node []int
		if spec.Interface != "" {
			node = sysinfo.HostFS().IfaceCPUs(spec.Interface)
		}
		list, err := engine.AutoCores(free, node, spec.Workers)
		if err != nil {
			return nil, err
		}
		spec.AutoPin = false
		spec.Cores = job.FormatCPUList(list)
		return list, nil
	}
	return nil, nil
}

// create validates and starts a job: job.Problems (400), *ConflictError
// (409), *busyError (429: Options.MaxJobs, Options.MaxParses), errClosing
// (503) or another error (500). Its checks and its start (which parse its
// template) take a parse turn.
func (s *Server) create(ctx context.Context, who Creator, spec job.Spec) (*entry, error) {
	name := who.Name
	s.mu.Lock()
	n := s.unfinishedLocked()
	s.mu.Unlock()
	if n >= s.opt.MaxJobs {
		return nil, s.jobsBusy(n)
	}
	release, ok := s.parseSlot(ctx)
	if !ok {
		return nil, s.parsesBusy()
	}
	defer release()
	spec.Limits = s.opt.Limits
	env := s.env()
	if err := s.check(&spec, env); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil, errClosing
	}
	if n := s.unfinishedLocked(); n >= s.opt.MaxJobs {
		s.mu.Unlock()
		return nil, s.jobsBusy(n)
	}
	cores, err := s.resolveCoresLocked(&spec)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	specJSON, err := json.Marshal(spec)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	now := time.Now()
	e := &entry{name: name, startedBy: who.StartedBy, client: who.Client, spec: spec, cores: cores, created: now, done: make(chan struct{})}
	rec := &JobRecord{Name: name, StartedBy: who.StartedBy, Client: who.Client, Spec: string(specJSON), Status: StatusRunning, Cores: job.FormatCPUList(cores), CreatedAt: now.UnixNano(), StartedAt: now.UnixNano()}
	if err := s.store.Insert(ctx, rec); err != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("job database: %w", err)
	}
	e.id = rec.ID
	// Its cores stay reserved while it starts, without the lock (Start
	// compiles the frames); Close waits for it.
	s.pending[e.id] = e
	s.wg.Add(1)
	s.mu.Unlock()

	run, err := job.Start(s.ctx, spec, env)
	s.mu.Lock()
	delete(s.pending, e.id)
	if err != nil {
		s.mu.Unlock()
		defer s.wg.Done()
		rec.Status, rec.EndedAt, rec.Error = StatusFailed, time.Now().UnixNano(), err.Error()
		if ferr := s.store.Finish(context.Background(), rec); ferr != nil {
			s.log.Error("job database", "job", rec.ID, "err", ferr)
		}
		return nil, stdoutFix(spec, err)
	}
	e.run = run
	s.running[e.id] = e
	if s.closing { // Close has stopped the others already
		e.stopAsked.Store(true)
		run.Stop()
	}
	s.mu.Unlock()
	go s.monitor(e, rec)
	s.log.Info("job started", "job", e.id, "name", name, "backend", spec.BackendName(), "cores", rec.Cores)
	return e, nil
}

// check validates spec as a job of this server, as create does before it
// starts one: the files it names, start_receiver on its backend
// (receiverFor: it may name the receiving port), the pipe's FIFO and
// job.Validate. It
// returns job.Problems (every problem at once) or another error; the
// caller holds a parse turn.
func (s *Server) check(spec *job.Spec, env job.Env) error {
	ps := s.checkFiles(spec)
	if p := receiverFor(spec); p != nil {
		ps = append(ps, p)
	}
	if spec.BackendName() == "pipe" && spec.FIFO == "" && spec.Connect == "" && !spec.StartReceiver {
		ps = append(ps, &job.OptionError{Field: "fifo", Reason: "is needed: a job of wpg serve has no standard input or output to carry the frames",
			Fix: "give {fifo} (a FIFO another process reads) or {start_receiver}"})
	}
	if err := job.Validate(*spec, env); err != nil {
		ps = append(ps, job.AsProblems(stdoutFix(*spec, err))...)
		if len(ps) == 0 {
			return err
		}
	}
	if ps != nil {
		return ps
	}
	return nil
}

// problemsWith is the 400 of a job some of whose fields could not be read
// (fes: a value of the wrong type, an unknown field, a label too long):
// those, then the problems check finds in the rest of spec, so that a
// client sees every problem at once, each field named once. When no parse
// turn comes within its wait, fes alone.
func (s *Server) problemsWith(ctx context.Context, fes []FieldError, spec job.Spec) []FieldError {
	release, ok := s.parseSlot(ctx)
	if !ok {
		return fes
	}
	defer release()
	spec.Limits = s.opt.Limits
	ps := job.AsProblems(s.check(&spec, s.env()))
	named := map[string]bool{}
	for _, fe := range fes {
		named[fe.Field] = true
	}
	for _, fe := range problemsBody(ps).Errors {
		if !named[fe.Field] {
			fes = append(fes, fe)
		}
	}
	return fes
}

// stdoutFix adds, to a problem about the standard streams, that a server
// job has none.
func stdoutFix(spec job.Spec, err error) error {
	ps := job.AsProblems(err)
	if ps == nil {
		return err
	}
	for _, p := range ps {
		if spec.BackendName() == "pipe" && (p.Field == "fifo" || p.Field == "backend" || p.Field == "output") {
			p.Fix = "a job of wpg serve has no standard input or output: give {fifo} (a FIFO another process reads) or {start_receiver}"
		}
	}
	return ps
}

// lookup returns the running or recently finished entry of id, or nil.
func (s *Server) lookup(id int64) *entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.running[id]; e != nil {
		return e
	}
	for _, e := range s.finished {
		if e.id == id {
			return e
		}
	}
	return nil
}

func (s *Server) forget(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finished = slices.DeleteFunc(s.finished, func(e *entry) bool { return e.id == id })
}

func parseID(v string) (int64, bool) {
	id, err := strconv.ParseInt(v, 10, 64)
	return id, err == nil && id > 0
}
