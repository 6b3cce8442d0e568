// Package server is `wpg serve`: a web UI and an HTTP API over package job
// that run several sending jobs at once, stream their progress, keep their
// history in SQLite and export Prometheus metrics.
//
// The API lives under /api/v1 and speaks JSON (docs/api.md):
//
//	POST   /api/v1/jobs              start a job from a job.Spec (400: every problem; 409: a core is taken)
//	GET    /api/v1/jobs              running jobs first, then the history, paged (?offset=&limit=)
//	GET    /api/v1/jobs/{id}         one job
//	POST   /api/v1/jobs/{id}/stop    stop a running job
//	DELETE /api/v1/jobs/{id}         forget a finished job
//	GET    /api/v1/jobs/{id}/report  the report, as `wpg send --json` writes it
//	GET    /api/v1/jobs/{id}/samples one sample per second
//	GET    /api/v1/jobs/{id}/events  Server-Sent Events: snapshots, then the report
//	POST   /api/v1/preview           a template's first frames, decoded and in hex
//	GET    /api/v1/backends          the backends and whether this host can run them
//	GET    /api/v1/sysinfo           the machine (wpg sysinfo --json)
//	GET    /api/v1/openapi.json      the OpenAPI 3 document of this API (openapi.go)
//	GET    /healthz                  liveness, without a token
//	GET    /metrics                  Prometheus text format
//
// The web UI (docs/serve.md) is html/template pages embedded in the
// binary, with htmx and uPlot vendored from npm (scripts/vendor-web.sh):
//
//	GET  /                 jobs: running, then the last Options.JobHistory finished
//	GET  /jobs/new         new job: template editor with a live decoded preview, backends and their options
//	POST /jobs             start the form's job (303 to its page; the form again with every problem)
//	GET  /jobs/{id}        one job: live charts by SSE, workers, stop, the final report
//	GET  /compare?id=&id=  two to MaxCompare finished jobs side by side
//	GET  /host             the machine, the backends it can run, the kernel features
//	GET  /login, POST /login, POST /logout
//
// With a token (Options.Token: at least MinTokenLen printable characters,
// CheckToken), every page, /api/v1 call and /metrics
// need "Authorization: Bearer TOKEN" (compared in constant time) or the
// session cookie the login form sets (CookieName: HttpOnly,
// SameSite=Strict; a random session per login, kept in memory, ended by
// logging out or after Options.SessionTTL); without one, ListenAndServe refuses any address that
// is not a loopback one, and every request whose Host is not a loopback
// name or address is refused (403: DNS rebinding). A job's files lie in
// Options.JobFiles when it is set, and a job never writes into the
// server's own files (its database, their neighbours, its open files).
// State-changing requests go through http.CrossOriginProtection, and
// request bodies are capped (Options.MaxBody, 1 MiB by default: 413).
// At most Options.MaxJobs jobs run and Options.MaxParses templates are
// parsed at once; beyond that a request gets 429 with Retry-After.
//
// A running job's monitor takes one snapshot per SnapshotInterval, shared
// by all its event streams, and stores one Sample per SampleInterval.
//
// Each job runs with its own CPUs: a job whose cores (given, or chosen
// for auto_pin from the CPUs no running job holds) overlap a running job's
// is refused with 409, naming that job. Jobs get no standard streams: the
// pipe backend needs a FIFO or a receiver of its own.
//
// The job database (Open) is SQLite (modernc.org/sqlite, pure Go) in WAL
// mode with a busy timeout and a single connection, so there is one
// writer; its schema is versioned (table schema_version) and migrated
// forward on open, after PRAGMA quick_check (a damaged database is
// refused). Every answer of status 500 or more is logged. A job that was
// running when the previous server died is marked "interrupted" when the
// database is opened again.
//
// The package prints nothing and reads no environment: it logs through
// Options.Logger.
package server
