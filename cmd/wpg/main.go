// Command wpg is a Linux data-path generator and benchmark. See the README
// and docs/cli.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/wpg-dev/wpg/cmd/wpg/cli"

	_ "github.com/wpg-dev/wpg/backend/all" // every backend registers itself
)

// stopSignals end every command cleanly: the run stops, files are
// flushed and closed, the report is printed. SIGHUP (the terminal or the
// SSH session went away, a supervisor's reload) stops like SIGTERM
// instead of killing the process with its buffers unwritten.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
