package cli

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/server"
)

func init() { register(newServeCmd) }

func newServeCmd() *cobra.Command {
	var listen, token, tokenFile, db string
	var verbose bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "serve the web UI and HTTP API: start jobs, watch them live, keep their history, export metrics",
		Long: `serve runs wpg as an HTTP server with a web UI (docs/serve.md) and an API (docs/api.md). Open
http://127.0.0.1:8080/ in a browser: start a job from a form with a live decoded preview of the
template, watch its rate and lateness charts, stop it, read its report, compare runs side by side.
From scripts, POST a job spec to /api/v1/jobs to start a run,
follow it live as Server-Sent Events, stop it, read its report (the JSON of wpg send --json) and its
per-second samples, preview templates, and scrape /metrics with Prometheus. Several jobs run at once,
each on its own cores: a job asking for a core a running job holds is refused (409).

It listens on 127.0.0.1:8080 unless --listen (or server.listen in wpg.toml) says otherwise, and refuses a
non-loopback address without a token. With --token or --token-file (server.token_file) every /api/v1
call and /metrics need "Authorization: Bearer TOKEN", and the web UI asks for the token once (a
session cookie: HttpOnly, SameSite=Strict). Jobs and their samples are kept in a SQLite
database, --db (server.db; default $XDG_STATE_HOME/wpg/jobs.db, ~/.local/state when unset), pruned to
server.job_history_db finished jobs; a job that was running when the server died is marked interrupted.
SIGINT, SIGTERM and SIGHUP stop the running jobs, store their reports and exit 0.`,
		Example: "  wpg serve\n  wpg serve --listen 0.0.0.0:8080 --token-file /etc/wpg/token --db /var/lib/wpg/jobs.db",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			for flag, key := range map[string]string{"listen": "server.listen", "db": "server.db", "token-file": "server.token_file", "job-files": "server.job_files"} {
				if fl := cmd.Flags().Lookup(flag); fl.Changed {
					if err := cfg.SetText(key, fl.Value.String(), "--"+flag); err != nil {
						return usageError(err)
					}
				}
			}
			for flag, key := range map[string]string{"max-jobs": "server.max_jobs", "max-parses": "server.max_parses"} {
				if fl := cmd.Flags().Lookup(flag); fl.Changed {
					n, _ := cmd.Flags().GetInt(flag)
					if err := cfg.Set(key, int64(n), "--"+flag); err != nil {
						return usageError(err)
					}
				}
			}
			if dir := cfg.Server.JobFiles; dir != "" {
				if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
					return usageError(fmt.Errorf("job files directory %s (server.job_files, from %s) is not a directory: create it (mkdir -p %s) or give another --job-files", dir, cfg.Sources["server.job_files"], dir))
				}
			}
			if token != "" && cmd.Flags().Changed("token-file") {
				return usageError(fmt.Errorf("--token and --token-file both give the token: give one of them"))
			}
			if token == "" && cfg.Server.TokenFile != "" {
				b, err := os.ReadFile(cfg.Server.TokenFile)
				if err != nil {
					return usageError(fmt.Errorf("token file (%s, from %s): %w: write the token into that file (one line, mode 0600), or give another --token-file", cfg.Server.TokenFile, cfg.Sources["server.token_file"], err))
				}
				if token = strings.TrimSpace(string(b)); token == "" {
					return usageError(fmt.Errorf("token file %s is empty: write the token into it", cfg.Server.TokenFile))
				}
			}
			if err := server.CheckToken(token); err != nil {
				if cmd.Flags().Changed("token") {
					return usageError(fmt.Errorf("--token: %w", err))
				}
				return usageError(fmt.Errorf("token file %s (from %s): %w", cfg.Server.TokenFile, cfg.Sources["server.token_file"], err))
			}
			if err := server.CheckListen(cfg.Server.Listen, token); err != nil {
				if src := cfg.Sources["server.listen"]; src != "default" && src != "--listen" {
					err = fmt.Errorf("%w (server.listen, from %s)", err, src) // the file, not a flag on the command line
				}
				return usageError(err)
			}
			path := cfg.Server.DB
			if path != "" {
				// SQLite's own error for a missing directory is "unable to
				// open database file (14)": say which, and the fix.
				if dir := filepath.Dir(path); dir != "" {
					if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
						return usageError(fmt.Errorf("job database %s (from %s): its directory %s does not exist: create it (mkdir -p %s) or give another --db PATH", path, cfg.Sources["server.db"], dir, dir))
					}
				}
				if fi, err := os.Stat(path); err == nil && fi.IsDir() {
					return usageError(fmt.Errorf("job database %s (from %s) is a directory: give the path of a file in it, e.g. --db %s", path, cfg.Sources["server.db"], filepath.Join(path, "jobs.db")))
				}
			}
			if path == "" {
				dir := os.Getenv("XDG_STATE_HOME")
				if dir == "" {
					home, err := os.UserHomeDir()
					if err != nil {
						return usageError(fmt.Errorf("no home directory for the job database: give --db PATH"))
					}
					dir = filepath.Join(home, ".local", "state")
				}
				path = filepath.Join(dir, "wpg", "jobs.db")
				if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
					return usageError(fmt.Errorf("job database directory: %w: give --db PATH", err))
				}
			}
			level := slog.LevelInfo
			if verbose {
				level = slog.LevelDebug
			}
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
			history := int(cfg.Server.JobHistory)
			if history == 0 {
				history = -1 // none
			}
			markStarted(cmd)
			return server.ListenAndServe(cmd.Context(), server.Options{
				Listen:       cfg.Server.Listen,
				Token:        token,
				DB:           path,
				PreviewMax:   int(cfg.Server.PreviewMax),
				JobHistory:   history,
				JobHistoryDB: int(cfg.Server.JobHistoryDB),
				JobFiles:     cfg.Server.JobFiles,
				MaxJobs:      int(cfg.Server.MaxJobs),
				MaxParses:    int(cfg.Server.MaxParses),
				Limits: job.Limits{
					RingBytes:           cfg.TX.RingBytes,
					PrerenderMaxBytes:   cfg.TX.PrerenderMaxBytes,
					PrerenderMaxPackets: cfg.TX.PrerenderMaxPackets,
				},
				Logger: log,
			}, func(a net.Addr) {
				fmt.Fprintf(cmd.ErrOrStderr(), "wpg serve: listening on http://%s (web UI: /, docs/serve.md; API: /api/v1, docs/api.md)\n", a)
			})
		},
	}
	cmd.Flags().StringVar(&listen, "listen", server.DefaultListen, "address to listen on, host:port (server.listen)")
	cmd.Flags().StringVar(&token, "token", "", "API token required as Authorization: Bearer, at least 16 characters (visible in ps: prefer --token-file)")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "file holding the API token, at least 16 characters (server.token_file)")
	cmd.Flags().StringVar(&db, "db", "", "job database, SQLite (server.db; default $XDG_STATE_HOME/wpg/jobs.db)")
	cmd.Flags().String("job-files", "", "directory every file a job names must lie in (server.job_files; default: anywhere)")
	cmd.Flags().Int("max-jobs", server.DefaultMaxJobs, "most jobs running at once; more get 429 (server.max_jobs)")
	cmd.Flags().Int("max-parses", server.DefaultMaxParses, "most templates parsed at once: previews, job checks and starts; more get 429 (server.max_parses)")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "log at debug level")
	return cmd
}
