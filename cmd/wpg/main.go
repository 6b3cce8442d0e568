// Command wpg is a Linux data-path generator and benchmark. See the README
// and docs/cli.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/wpg-dev/wpg/internal/cli"

	// Backends register themselves.
	_ "github.com/wpg-dev/wpg/backend/cma"
	_ "github.com/wpg-dev/wpg/backend/memcpy"
	_ "github.com/wpg-dev/wpg/backend/null"
	_ "github.com/wpg-dev/wpg/backend/pcapfile"
	_ "github.com/wpg-dev/wpg/backend/pipe"
	_ "github.com/wpg-dev/wpg/backend/shm"
	_ "github.com/wpg-dev/wpg/backend/unix"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
