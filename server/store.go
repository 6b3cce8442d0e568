package server

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"modernc.org/sqlite" // the database/sql driver "sqlite", and its errors

	"github.com/wpg-dev/wpg/internal/sys"
)

// Status is the state of a job.
type Status string

// The states of a job. Running is the only unfinished one.
const (
	StatusRunning     Status = "running"
	StatusDone        Status = "done"
	StatusFailed      Status = "failed"
	StatusStopped     Status = "stopped"
	StatusInterrupted Status = "interrupted" // the server died while it ran
)

// migrations are the schema versions in order: migrations[i] brings a
// database from version i to i+1. Append only.
var migrations = []string{
	`CREATE TABLE jobs (
		id         INTEGER PRIMARY KEY AUTOINCREMENT,
		name       TEXT NOT NULL DEFAULT '',
		spec       TEXT NOT NULL,
		status     TEXT NOT NULL,
		cores      TEXT NOT NULL DEFAULT '',
		created_at INTEGER NOT NULL,
		started_at INTEGER NOT NULL DEFAULT 0,
		ended_at   INTEGER NOT NULL DEFAULT 0,
		error      TEXT NOT NULL DEFAULT '',
		frames     INTEGER NOT NULL DEFAULT 0,
		bytes      INTEGER NOT NULL DEFAULT 0,
		report     TEXT
	);
	CREATE INDEX jobs_status ON jobs(status, id);
	CREATE TABLE samples (
		job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
		t      INTEGER NOT NULL,
		frames INTEGER NOT NULL,
		bytes  INTEGER NOT NULL,
		pps    REAL NOT NULL,
		bps    REAL NOT NULL,
		PRIMARY KEY (job_id, t)
	);`,
	// 2: who started a job, and the lateness and loss of each second.
	`ALTER TABLE jobs ADD COLUMN started_by TEXT NOT NULL DEFAULT '';
	ALTER TABLE jobs ADD COLUMN client TEXT NOT NULL DEFAULT '';
	ALTER TABLE samples ADD COLUMN lateness_p50_ns INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE samples ADD COLUMN lateness_p99_ns INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE samples ADD COLUMN lateness_max_ns INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE samples ADD COLUMN lost INTEGER;`,
	// 3: the receiver's one-way latency of each second.
	`ALTER TABLE samples ADD COLUMN latency_p99_ns INTEGER NOT NULL DEFAULT 0;`,
	// 4: each template stream's frames and rate of each second (JSON).
	`ALTER TABLE samples ADD COLUMN streams TEXT;`,
}

// SchemaVersion is the schema version this build writes.
var SchemaVersion = len(migrations)

// Store is the job database.
type Store struct {
	db   *sql.DB
	lock *os.File // PATH.lock, held while the store is open
}

// JobRecord is one job as the database holds it. Times are Unix
// nanoseconds (0: not yet).
type JobRecord struct {
	ID   int64
	Name string
	// StartedBy is the name the client gave (CreateRequest.StartedBy, or
	// the web UI's form); Client the address the request came from.
	StartedBy string
	Client    string
	Spec      string // the job.Spec, JSON
	Status    Status
	Cores     string
	CreatedAt int64
	StartedAt int64
	EndedAt   int64
	Error     string
	Frames    uint64
	Bytes     uint64
	Report    []byte // report JSON; nil when none
}

// Sample is one second of a job: the totals at its end and the rates over
// it, with the pacing lateness of the frames sent in it. The last sample
// of an ended job covers the part second from the one before to its end.
type Sample struct {
	// T is the second since the job started (1, 2, …).
	T      int64   `json:"t"`
	Frames uint64  `json:"frames"`
	Bytes  uint64  `json:"bytes"`
	PPS    float64 `json:"pps"`
	BPS    float64 `json:"bps"`
	// LatenessP50Ns, LatenessP99Ns and LatenessMaxNs are the lateness of
	// the frames sent in this second (0: a flat-out run, or no frame).
	LatenessP50Ns int64 `json:"lateness_p50_ns"`
	LatenessP99Ns int64 `json:"lateness_p99_ns"`
	LatenessMaxNs int64 `json:"lateness_max_ns"`
	// Lost is the frames the job's own receivers (local paths) counted
	// lost so far: live in every second (their progress messages), and
	// in the last sample from the report; nil without such a receiver, or
	// with one that sends no progress (the last sample has it still).
	Lost *int64 `json:"lost,omitempty"`
	// LatencyP99Ns is the receivers' one-way latency p99 of the frames
	// they counted in this second (0: not measured).
	LatencyP99Ns int64 `json:"latency_p99_ns,omitempty"`
	// Streams are a packet template's streams, in its order: each one's
	// frames so far and its rate over this second (absent for payload
	// frames, and for templates of more than MaxChartStreams streams).
	Streams []StreamSample `json:"streams,omitempty"`
}

// StreamSample is one template stream of a Sample.
type StreamSample struct {
	Frames uint64  `json:"frames"`
	PPS    float64 `json:"pps"`
}

// MaxChartStreams caps the streams whose figures a job's samples and
// snapshots carry (each one a series of its charts): a template of more
// streams has none.
const MaxChartStreams = 64

// OpenStore opens (creating it if need be) the job database at path,
// migrates its schema to SchemaVersion and marks every job still
// "running" as interrupted, ending it at its last sample, with that
// sample's totals as its frames and bytes. It returns how
// many jobs it marked. While it is open it holds an exclusive lock on
// PATH.lock: a second server on the same database is refused (it would
// mark the first one's running jobs interrupted, and both would write).
func OpenStore(ctx context.Context, path string) (*Store, int, error) {
	lock, err := sys.LockFile(path + ".lock")
	if errors.Is(err, sys.ErrLocked) {
		return nil, 0, fmt.Errorf("job database %s is in use by another wpg serve (%w): stop that one, or give this one another --db", path, err)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("job database %s: %w", path, err)
	}
	st, n, err := openStore(ctx, path)
	if err != nil {
		lock.Close()
		return nil, 0, err
	}
	st.lock = lock
	return st, n, nil
}

func openStore(ctx context.Context, path string) (*Store, int, error) {
	q := url.Values{}
	for _, p := range []string{"busy_timeout(5000)", "journal_mode(WAL)", "foreign_keys(1)", "synchronous(NORMAL)"} {
		q.Add("_pragma", p)
	}
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, 0, fmt.Errorf("job database %s: %w", path, err)
	}
	db.SetMaxOpenConns(1) // one connection: one writer
	s := &Store{db: db}
	if err := s.quickCheck(ctx); err != nil {
		db.Close()
		var se *sqlite.Error
		var dmg damage
		if errors.As(err, &dmg) || errors.As(err, &se) && (se.Code()&0xff == sqliteCorrupt || se.Code()&0xff == sqliteNotADB) {
			return nil, 0, fmt.Errorf("job database %s is damaged (PRAGMA quick_check: %v): move it aside (mv %s %s.damaged) and start with a new one; sqlite3's .recover command may save its jobs", path, err, path, path)
		}
		return nil, 0, fmt.Errorf("job database %s: %w", path, err)
	}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, 0, fmt.Errorf("job database %s: %w", path, err)
	}
	n, err := s.markInterrupted(ctx)
	if err != nil {
		db.Close()
		return nil, 0, fmt.Errorf("job database %s: %w", path, err)
	}
	return s, n, nil
}

// quickCheck runs PRAGMA quick_check, which reads every page of every
// table and index: nil when it says "ok". A server started on a damaged
// page answered every call that read it with 500.
func (s *Store) quickCheck(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, `PRAGMA quick_check(5)`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return err
		}
		found = append(found, line)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(found) == 1 && found[0] == "ok" {
		return nil
	}
	return damage(strings.Join(found, "; "))
}

// damage is what quick_check found.
type damage string

func (d damage) Error() string { return string(d) }

// SQLite's primary result codes of a damaged file.
const (
	sqliteCorrupt = 11 // SQLITE_CORRUPT
	sqliteNotADB  = 26 // SQLITE_NOTADB
)

func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return err
	}
	var v int
	err := s.db.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := s.db.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (0)`); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	if v > len(migrations) {
		return fmt.Errorf("schema version %d is newer than this wpg's %d: use a newer wpg, or another --db", v, len(migrations))
	}
	for ; v < len(migrations); v++ {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration to version %d: %w", v+1, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = ?`, v+1); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) markInterrupted(ctx context.Context) (int, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE jobs SET status = ?,
		ended_at = MAX(started_at, started_at + 1000000000 * COALESCE((SELECT MAX(t) FROM samples WHERE job_id = jobs.id), 0)),
		frames = COALESCE((SELECT frames FROM samples WHERE job_id = jobs.id ORDER BY t DESC LIMIT 1), frames),
		bytes = COALESCE((SELECT bytes FROM samples WHERE job_id = jobs.id ORDER BY t DESC LIMIT 1), bytes),
		error = 'the server stopped before the job''s end was stored (it was running, or its end could not be written: the server''s log says which); ' ||
			CASE WHEN EXISTS (SELECT 1 FROM samples WHERE job_id = jobs.id) THEN 'its samples up to then are kept' ELSE 'no sample of it was stored' END
		WHERE status = ?`, StatusInterrupted, StatusRunning)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// Close closes the database and releases its lock.
func (s *Store) Close() error {
	err := s.db.Close()
	if s.lock != nil {
		s.lock.Close()
		s.lock = nil
	}
	return err
}

// Version returns the database's schema version.
func (s *Store) Version(ctx context.Context) (int, error) {
	var v int
	err := s.db.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v)
	return v, err
}

// Insert adds a job and sets its ID.
func (s *Store) Insert(ctx context.Context, j *JobRecord) error {
	res, err := s.db.ExecContext(ctx, `INSERT INTO jobs (name, started_by, client, spec, status, cores, created_at, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		j.Name, j.StartedBy, j.Client, j.Spec, j.Status, j.Cores, j.CreatedAt, j.StartedAt)
	if err != nil {
		return err
	}
	j.ID, err = res.LastInsertId()
	return err
}

// Finish records a job's end: its status, error, totals and report.
func (s *Store) Finish(ctx context.Context, j *JobRecord) error {
	_, err := s.db.ExecContext(ctx, `UPDATE jobs SET status = ?, ended_at = ?, error = ?, frames = ?, bytes = ?, report = ? WHERE id = ?`,
		j.Status, j.EndedAt, j.Error, int64(j.Frames), int64(j.Bytes), nullBytes(j.Report), j.ID)
	return err
}

func nullBytes(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// AddSample records one second of a running job.
func (s *Store) AddSample(ctx context.Context, id int64, x Sample) error {
	var lost any
	if x.Lost != nil {
		lost = *x.Lost
	}
	var streams any
	if x.Streams != nil {
		b, err := json.Marshal(x.Streams)
		if err != nil {
			return err
		}
		streams = string(b)
	}
	_, err := s.db.ExecContext(ctx, `INSERT OR REPLACE INTO samples (job_id, t, frames, bytes, pps, bps, lateness_p50_ns, lateness_p99_ns, lateness_max_ns, lost, latency_p99_ns, streams)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, x.T, int64(x.Frames), int64(x.Bytes), x.PPS, x.BPS, x.LatenessP50Ns, x.LatenessP99Ns, x.LatenessMaxNs, lost, x.LatencyP99Ns, streams)
	return err
}

// Samples returns a job's samples in order.
func (s *Store) Samples(ctx context.Context, id int64) ([]Sample, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT t, frames, bytes, pps, bps, lateness_p50_ns, lateness_p99_ns, lateness_max_ns, lost, latency_p99_ns, streams
		FROM samples WHERE job_id = ? ORDER BY t`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Sample{}
	for rows.Next() {
		var x Sample
		var f, b int64
		var lost sql.NullInt64
		var streams sql.NullString
		if err := rows.Scan(&x.T, &f, &b, &x.PPS, &x.BPS, &x.LatenessP50Ns, &x.LatenessP99Ns, &x.LatenessMaxNs, &lost, &x.LatencyP99Ns, &streams); err != nil {
			return nil, err
		}
		if streams.Valid {
			// A row this server wrote; one it cannot read has no streams.
			json.Unmarshal([]byte(streams.String), &x.Streams)
		}
		x.Frames, x.Bytes = uint64(f), uint64(b)
		if lost.Valid {
			x.Lost = &lost.Int64
		}
		out = append(out, x)
	}
	return out, rows.Err()
}

const jobColumns = `id, name, started_by, client, spec, status, cores, created_at, started_at, ended_at, error, frames, bytes, report`

func scanJob(sc interface{ Scan(...any) error }) (*JobRecord, error) {
	var j JobRecord
	var f, b int64
	var rep sql.NullString
	if err := sc.Scan(&j.ID, &j.Name, &j.StartedBy, &j.Client, &j.Spec, &j.Status, &j.Cores, &j.CreatedAt, &j.StartedAt, &j.EndedAt, &j.Error, &f, &b, &rep); err != nil {
		return nil, err
	}
	j.Frames, j.Bytes = uint64(f), uint64(b)
	if rep.Valid {
		j.Report = []byte(rep.String)
	}
	return &j, nil
}

// Get returns one job, or nil when there is none with that ID.
func (s *Store) Get(ctx context.Context, id int64) (*JobRecord, error) {
	j, err := scanJob(s.db.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return j, err
}

// List returns limit jobs from offset, running ones first, then the rest
// newest first, and the number of jobs in all.
func (s *Store) List(ctx context.Context, offset, limit int) ([]*JobRecord, int, error) {
	var total int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM jobs`).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+jobColumns+` FROM jobs ORDER BY (status = ?) DESC, id DESC LIMIT ? OFFSET ?`, StatusRunning, limit, offset)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := []*JobRecord{}
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, j)
	}
	return out, total, rows.Err()
}

// Delete removes a finished job and its samples; false when there is no
// finished job with that ID.
func (s *Store) Delete(ctx context.Context, id int64) (bool, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM jobs WHERE id = ? AND status != ?`, id, StatusRunning)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// Prune keeps the keep newest finished jobs and deletes the older ones
// with their samples; it returns how many it deleted.
func (s *Store) Prune(ctx context.Context, keep int64) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM jobs WHERE status != ? AND id NOT IN
		(SELECT id FROM jobs WHERE status != ? ORDER BY id DESC LIMIT ?)`, StatusRunning, StatusRunning, keep)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
