//go:build !linux

package afxdp

import (
	"context"
	"fmt"
	"runtime"

	"github.com/wpg-dev/wpg/backend"
)

func open(context.Context, backend.Options) (backend.Instance, error) {
	return nil, &backend.UnsupportedError{Backend: "afxdp", Reason: fmt.Sprintf("AF_XDP sockets are Linux only, this is %s", runtime.GOOS)}
}
