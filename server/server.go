package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/sysinfo"
)

// Defaults of Options.
const (
	DefaultListen       = "127.0.0.1:8080"
	DefaultMaxBody      = 1 << 20
	DefaultBodyTimeout  = 30 * time.Second
	DefaultPreviewMax   = 256
	DefaultJobHistory   = 100
	DefaultJobHistoryDB = 1000
	// SnapshotInterval is how often the event stream sends a snapshot.
	SnapshotInterval = 250 * time.Millisecond
	// SampleInterval is how often a running job's sample is stored.
	SampleInterval = time.Second
)

// Options configure a Server.
type Options struct {
	// Listen is the address ListenAndServe binds (DefaultListen when "").
	Listen string
	// Token, when not empty, is required on every /api/v1 call and on
	// /metrics as "Authorization: Bearer TOKEN".
	Token string
	// DB is the path of the job database (created when missing).
	DB string
	// JobFiles, when not empty, is the directory every file a job names
	// must lie in (server.job_files): output, fifo, template, pcap,
	// payload_file, connect, the captures a template replays and the
	// files dpdk_args name (what that check cannot follow is refused);
	// device must then be a character device under /dev. A relative
	// path is taken from it.
	JobFiles string
	// PreviewMax caps the frames of one preview (server.preview_max).
	PreviewMax int
	// JobHistory is how many finished jobs of this process /metrics
	// keeps showing (server.job_history; 0: DefaultJobHistory, negative:
	// none).
	JobHistory int
	// JobHistoryDB is how many finished jobs the database keeps
	// (server.job_history_db); the oldest are pruned.
	JobHistoryDB int
	// MaxBody caps a request body in bytes (DefaultMaxBody when 0): 413.
	MaxBody int64
	// BodyTimeout bounds the time a request body may take to arrive, from
	// the end of its headers (DefaultBodyTimeout when 0): 408.
	BodyTimeout time.Duration
	// SessionTTL is how long a login of the web UI lasts
	// (DefaultSessionTTL when 0).
	SessionTTL time.Duration
	// MaxJobs caps the jobs running (or starting) at once
	// (server.max_jobs; DefaultMaxJobs when 0): 429.
	MaxJobs int
	// MaxParses caps the templates parsed at once: previews, a job's
	// checks and its start (server.max_parses; DefaultMaxParses when 0).
	// A request waits up to a second for a turn, then gets 429.
	MaxParses int
	// Limits are the site defaults (wpg.toml [tx]) given to every job.
	Limits job.Limits
	// Logger receives what the server has to say; nil discards.
	Logger *slog.Logger
	// Launcher builds the receiver processes of jobs that start their own
	// (job.Env.Launcher); nil runs this executable as `wpg recv`.
	Launcher backend.Launcher
	// Probes caches kernel feature probes for the host page and the backend
	// list, what this server can run (nil: sysinfo.HostProbes).
	Probes *sysinfo.Probes
	// Caps reports whether the process holds a capability by name
	// ("CAP_NET_RAW"); nil reads this process's effective set.
	Caps func(name string) bool
}

// Server is the HTTP server of wpg serve: its jobs, its database and its
// handler.
type Server struct {
	opt   Options
	log   *slog.Logger
	store *Store
	reg   *prometheus.Registry
	h     http.Handler
	ui    *ui

	ctx    context.Context // the jobs' context
	cancel context.CancelFunc

	mu       sync.Mutex
	running  map[int64]*entry
	pending  map[int64]*entry // starting: their cores are held
	finished []*entry         // of this process, newest last, at most JobHistory
	closing  bool
	// closeOnce closes the store once, also after Serve's stopJobs.
	closeOnce sync.Once
	wg        sync.WaitGroup // one per starting job and running job's monitor

	sysOnce sync.Once
	sysJSON []byte

	fails    *failLimiter // wrong tokens per client address (limit.go)
	sessions *sessions    // the web UI's logins (session.go)

	hosts []string // the listen addresses' hosts, which checkHost allows (under mu)

	dbReal       string // Options.DB, absolute, its symlinks resolved
	jobFilesReal string // Options.JobFiles, likewise

	closed     chan struct{} // closed when the server starts shutting down
	storeRetry time.Duration // the first wait before storing a job's end again

	parses    chan struct{} // one per template parse under way (admit.go)
	parseWait time.Duration // how long a parse waits for a turn
}

// New opens the job database (marking jobs left running as interrupted)
// and returns a server; Handler serves it, Close stops its jobs.
func New(ctx context.Context, opt Options) (*Server, error) {
	orDefault(&opt.PreviewMax, DefaultPreviewMax)
	switch {
	case opt.JobHistory == 0:
		opt.JobHistory = DefaultJobHistory
	case opt.JobHistory < 0:
		opt.JobHistory = 0
	}
	orDefault(&opt.JobHistoryDB, DefaultJobHistoryDB)
	orDefault(&opt.MaxBody, DefaultMaxBody)
	orDefault(&opt.BodyTimeout, DefaultBodyTimeout)
	orDefault(&opt.SessionTTL, DefaultSessionTTL)
	orDefault(&opt.MaxJobs, DefaultMaxJobs)
	orDefault(&opt.MaxParses, DefaultMaxParses)
	if opt.Caps == nil {
		opt.Caps = hasCap
	}
	if opt.Probes == nil {
		opt.Probes = sysinfo.HostProbes()
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opt.DB == "" {
		return nil, errors.New("server: no job database path: give Options.DB (wpg serve --db)")
	}
	if err := CheckToken(opt.Token); err != nil {
		return nil, err
	}
	var jobFilesReal string
	if opt.JobFiles != "" {
		abs, err := filepath.Abs(opt.JobFiles)
		if err == nil {
			jobFilesReal, err = filepath.EvalSymlinks(abs)
		}
		if fi, serr := os.Stat(jobFilesReal); err == nil && (serr != nil || !fi.IsDir()) {
			err = errors.New("not a directory")
		}
		if err != nil {
			return nil, fmt.Errorf("job files directory %s (server.job_files): %v: create it (mkdir -p %s) or give another", opt.JobFiles, err, opt.JobFiles)
		}
		opt.JobFiles = abs
	}
	dbAbs, err := filepath.Abs(opt.DB)
	if err != nil {
		return nil, fmt.Errorf("job database %s: %w", opt.DB, err)
	}
	store, n, err := OpenStore(ctx, opt.DB)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		log.Warn("jobs were running when the server last stopped: marked interrupted", "jobs", n, "db", opt.DB)
	}
	u, err := newUI()
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("server: web UI: %w", err)
	}
	s := &Server{opt: opt, log: log, store: store, ui: u, running: map[int64]*entry{}, pending: map[int64]*entry{}, fails: newFailLimiter(), sessions: newSessions(opt.SessionTTL),
		hosts: []string{listenHost(opt.Listen)}, dbReal: realPath(dbAbs), jobFilesReal: jobFilesReal,
		closed: make(chan struct{}), storeRetry: time.Second, parses: make(chan struct{}, opt.MaxParses), parseWait: time.Second}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.reg = s.newRegistry()
	s.h = s.routes()
	return s, nil
}

// orDefault sets *v to def when it is zero or less (an Options field not
// given).
func orDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.h }

// Store returns the job database.
func (s *Server) Store() *Store { return s.store }

// Close refuses new jobs, stops every running job (their event streams end
// with the report), waits for their reports to be stored and closes the
// database.
func (s *Server) Close() error {
	s.stopJobs()
	var err error
	s.closeOnce.Do(func() { err = s.store.Close() })
	return err
}

// stopJobs refuses new jobs, stops the running ones and waits for their
// reports to be stored; false when it has run before.
func (s *Server) stopJobs() bool {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return false
	}
	s.closing = true
	close(s.closed)
	for _, e := range s.running {
		e.stopAsked.Store(true)
		e.run.Stop()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.cancel()
	return true
}

// MinTokenLen is the shortest token CheckToken takes, in bytes.
const MinTokenLen = 16

// CheckToken refuses a token nobody could use or anybody could guess: a
// blank one, one with blanks at its ends (the login form trims what is
// typed), one with a control character (no HTTP header carries it), and
// one shorter than MinTokenLen. "" is no token (loopback only).
func CheckToken(token string) error {
	const gen = "e.g. openssl rand -hex 16 > FILE (or head -c 18 /dev/urandom | base64 > FILE), then --token-file FILE"
	switch t := strings.TrimSpace(token); {
	case token == "":
		return nil
	case t == "":
		return errors.New("the token is blank: give a token of at least 16 characters, " + gen)
	case t != token:
		return errors.New("the token has blanks at its ends: the login form trims what is typed, so nobody could log in with it: remove them")
	case strings.IndexFunc(token, unicode.IsControl) >= 0:
		return errors.New("the token has a control character, which no HTTP header carries: give printable characters, " + gen)
	case len(token) < MinTokenLen:
		return fmt.Errorf("the token is too short (%d of the %d characters it needs): give a longer one, %s", len(token), MinTokenLen, gen)
	}
	return nil
}

// CheckListen refuses an address that is not a loopback one when there is
// no token: the API starts jobs on this host.
func CheckListen(addr, token string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %v: write host:port, e.g. %s", addr, err, DefaultListen)
	}
	if _, perr := net.LookupPort("tcp", port); perr != nil {
		return fmt.Errorf("listen address %q: port %q is not a port number: give 1 to 65535 (0: any free port), e.g. %s", addr, port, DefaultListen)
	}
	if token != "" {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("listen address %q is not a loopback address and no token is set: anyone who reaches it could start jobs on this host; give --token-file FILE (or --token), or listen on %s", addr, DefaultListen)
}

// ListenAndServe checks the address (CheckListen), opens the server,
// listens, calls ready (when not nil) with the address bound and serves
// until ctx is cancelled. Then it shuts down gracefully: the event
// streams end, running jobs are stopped and their reports stored, and
// requests in flight get up to 5 s to finish.
func ListenAndServe(ctx context.Context, opt Options, ready func(net.Addr)) error {
	if opt.Listen == "" {
		opt.Listen = DefaultListen
	}
	if err := CheckToken(opt.Token); err != nil {
		return err
	}
	if err := CheckListen(opt.Listen, opt.Token); err != nil {
		return err
	}
	s, err := New(ctx, opt)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opt.Listen)
	if err != nil {
		s.Close()
		return listenError(opt.Listen, err)
	}
	if ready != nil {
		ready(ln.Addr())
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx is cancelled, then shuts down as
// ListenAndServe says and closes the server.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.h,
		ReadHeaderTimeout: 10 * time.Second,
		// Bodies have their own deadline (guard); a connection left idle
		// between requests is closed after this.
		IdleTimeout: 2 * time.Minute,
		ErrorLog:    slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	s.mu.Lock()
	s.hosts = append(s.hosts, listenHost(ln.Addr().String()))
	s.mu.Unlock()
	s.log.Info("serving", "addr", ln.Addr().String(), "db", s.opt.DB, "token", s.opt.Token != "")
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	s.log.Info("shutting down: stopping running jobs")
	s.stopJobs() // the event streams get their report events and end
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if serr := hs.Shutdown(sctx); serr != nil && err == nil {
		err = serr
	}
	cerr := s.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, cerr)
}

// listenError says why the address could not be taken and what to do.
func listenError(addr string, err error) error {
	if h := sys.ListenHint(err); h != "" {
		return fmt.Errorf("listen on %s: %w: %s", addr, err, h)
	}
	return fmt.Errorf("listen on %s: %w", addr, err)
}
