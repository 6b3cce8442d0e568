//go:build linux

package sys

import (
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// RunInNetns runs f on a fresh OS thread that has joined the network
// namespace at nsPath (e.g. /run/netns/NAME); sockets f opens stay in that
// namespace. The thread goes back to the caller's namespace afterwards;
// if that fails, the thread is left locked so the Go runtime discards it
// instead of handing it to another goroutine in a foreign namespace.
// Needs CAP_SYS_ADMIN.
func RunInNetns(nsPath string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			errc <- fmt.Errorf("open own network namespace: %w", err)
			return // thread stays locked and dies with the goroutine
		}
		defer orig.Close()
		target, err := os.Open(nsPath)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("open network namespace %s: %w", nsPath, err)
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("setns(%s): %w", nsPath, os.NewSyscallError("setns", err))
			return
		}
		ferr := f()
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("return from network namespace %s: %w", nsPath, err)
			return // locked: the runtime kills this thread
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// JoinNetns moves the calling thread into the network namespace at nsPath
// for good: the caller has locked the goroutine to its thread
// (runtime.LockOSThread) and keeps it locked until the goroutine exits,
// so that the runtime discards the thread rather than hand it to another
// goroutine in a foreign namespace (an engine worker does). Needs
// CAP_SYS_ADMIN.
func JoinNetns(nsPath string) error {
	target, err := os.Open(nsPath)
	if err != nil {
		return fmt.Errorf("open network namespace %s: %w", nsPath, err)
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("setns(%s): %w", nsPath, os.NewSyscallError("setns", err))
	}
	return nil
}
