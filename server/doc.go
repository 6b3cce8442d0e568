// Package server is `wpg serve`: an HTTP API over package job that runs
// several sending jobs at once, streams their progress, keeps their
// history in SQLite and exports Prometheus metrics.
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
//	GET    /healthz                  liveness, without a token
//	GET    /metrics                  Prometheus text format
//
// With a token (Options.Token), every /api/v1 call and /metrics need
// "Authorization: Bearer TOKEN" (compared in constant time); without one,
// ListenAndServe refuses any address that is not a loopback one.
// State-changing requests go through http.CrossOriginProtection, and
// request bodies are capped (Options.MaxBody, 1 MiB by default: 413).
//
// Each job runs with its own CPUs: a job whose cores (given, or chosen
// for auto_pin from the CPUs no running job holds) overlap a running job's
// is refused with 409, naming that job. Jobs get no standard streams: the
// pipe backend needs a FIFO or a receiver of its own.
//
// The job database (Open) is SQLite (modernc.org/sqlite, pure Go) in WAL
// mode with a busy timeout and a single connection, so there is one
// writer; its schema is versioned (table schema_version) and migrated
// forward on open. A job that was running when the previous server died
// is marked "interrupted" when the database is opened again.
//
// The package prints nothing and reads no environment: it logs through
// Options.Logger.
package server
