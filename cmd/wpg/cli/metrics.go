package cli

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/metrics"
)

// metricsFlags are --metrics-listen, --metrics-linger and --job of send
// and recv.
type metricsFlags struct {
	listen string
	linger time.Duration
	job    string
}

// addMetricsFlags adds the metrics flags; jobHelp is --job's help, which
// differs between send and recv.
func addMetricsFlags(fl *pflag.FlagSet, f *metricsFlags, jobHelp string) {
	fl.StringVar(&f.job, "job", "", jobHelp)
	fl.StringVar(&f.listen, "metrics-listen", "", "serve the run's live counters for Prometheus at http://`ADDR`/metrics while it runs: PORT or :PORT listens on 127.0.0.1, HOST:PORT on that address (0.0.0.0:PORT: every interface, your choice); the names of wpg serve's /metrics (docs/distributed.md)")
	fl.DurationVar(&f.linger, "metrics-linger", metrics.DefaultLinger, "with --metrics-listen: keep serving this long after the run (not after Ctrl-C), so that the last scrape sees the final counts; at least the scrape interval, at most 1h")
}

// jobName is what --job takes: a Prometheus label value that PromQL, a
// shell and a Kubernetes manifest take as it is; the job identity
// (wpg-0123456789abcdef) is one.
var jobName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// checkJob validates --job: a name of jobName's form, and on send (which
// has no other use for it) only with --metrics-listen.
func (f *metricsFlags) checkJob(send bool) error {
	if f.job == "" {
		return nil
	}
	if !jobName.MatchString(f.job) {
		return fmt.Errorf("--job %q: give 1 to 63 letters, digits, '.', '_' or '-', the first a letter or digit (a job label that PromQL and a shell take as it is), e.g. --job nightly-1, or the senders' job identity (the job of their report, wpg-0123456789abcdef)", f.job)
	}
	if send && f.listen == "" {
		return fmt.Errorf("--job %s names the job in the series of --metrics-listen: add --metrics-listen ADDR (the report's job stays the job identity)", f.job)
	}
	return nil
}

// maxLinger bounds --metrics-linger: a scrape interval is seconds to
// minutes, and a pod that lingers longer holds its node's cores for
// nothing.
const maxLinger = time.Hour

// checkLinger refuses --metrics-linger without --metrics-listen (it
// would keep nothing up) and one over maxLinger.
func (f *metricsFlags) checkLinger(cmd *cobra.Command) error {
	if f.listen == "" && changed(cmd, "metrics-linger") != nil {
		return fmt.Errorf("--metrics-linger %v: keeps the --metrics-listen endpoint up after the run, and none is asked for: add --metrics-listen ADDR, or drop --metrics-linger", f.linger)
	}
	if f.linger > maxLinger {
		return fmt.Errorf("--metrics-linger %v: at most %v; it need only cover the scrape interval (e.g. 30s)", f.linger, maxLinger)
	}
	return nil
}

// checkListen reads --metrics-listen's address before anything starts
// (whether it can be bound is the run's to find).
func (f *metricsFlags) checkListen() error {
	if f.listen == "" {
		return nil
	}
	if _, err := metrics.ListenAddr(f.listen); err != nil {
		return fmt.Errorf("--metrics-listen %s: %v", f.listen, err)
	}
	return nil
}

// serveMetrics starts the --metrics-listen endpoint for c (segment: the
// constant label of a segmented run). It says where on stderr unless the
// output is JSON (a pod's log holds the report alone). The returned stop
// lingers as --metrics-linger asks (unless the command was interrupted),
// then closes the endpoint; nil without --metrics-listen.
func serveMetrics(cmd *cobra.Command, f *metricsFlags, c prometheus.Collector, segment string, quiet bool) (func(), error) {
	if f.listen == "" {
		return nil, nil
	}
	if f.linger < 0 {
		return nil, usageError(fmt.Errorf("--metrics-linger %v: give 0 or more, e.g. 30s (at least the scrape interval)", f.linger))
	}
	ep, err := metrics.Listen(f.listen, metrics.Registry(c, segment))
	if err != nil {
		return nil, &ExitError{Code: ExitRuntime, Err: fmt.Errorf("--metrics-listen %s: %w; give a free port (0: any) or another address", f.listen, err)}
	}
	if !quiet {
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: metrics at %s\n", cmd.CommandPath(), ep.URL())
	}
	return func() {
		if f.linger > 0 && cmd.Context().Err() == nil {
			t := time.NewTimer(f.linger)
			select {
			case <-t.C:
			case <-cmd.Context().Done():
				t.Stop()
			}
		}
		_ = ep.Close()
	}, nil
}

// liveRun is the collector of the run a command has going now (send; bench
// --repeat starts one after another): nothing before the first.
type liveRun struct{ cur atomic.Pointer[metrics.Run] }

// set makes run the live one; its job label is name (--job), else the
// run's job identity.
func (l *liveRun) set(run *job.Run, spec job.Spec, name string) {
	if name == "" {
		name = run.Job()
	}
	l.cur.Store(metrics.NewRun(run, name, runName(spec), spec.BackendName()))
}

// Describe implements prometheus.Collector.
func (l *liveRun) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range metrics.RunDescs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (l *liveRun) Collect(ch chan<- prometheus.Metric) {
	if r := l.cur.Load(); r != nil {
		r.Collect(ch)
	}
}

// runName is a run's name label: its template's or capture's file name,
// "default" for the embedded template, "payload" for payload frames.
func runName(s job.Spec) string {
	switch {
	case s.Template != "":
		return filepath.Base(s.Template)
	case s.Pcap != "":
		return filepath.Base(s.Pcap)
	case s.TemplateText != "":
		return "template"
	}
	return "default"
}
