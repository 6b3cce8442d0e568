// Command wpg is a Linux data-path generator and benchmark. See the README
// and docs/cli.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/wpg-dev/wpg/internal/cli"

	_ "github.com/wpg-dev/wpg/backend/all" // every backend registers itself
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
