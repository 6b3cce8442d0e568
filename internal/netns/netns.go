// Package netns creates private, named network namespaces with a veth pair
// (and, with NewRouter, a Linux router between two links to test against)
// for wpg's own runs (wpg bench's network rows, and later wpg ndr), and
// removes them: on Close, and for namespaces left behind by a wpg process
// that died without closing them (kill -9) with CleanStale.
//
// A namespace is named "wpg-<pid>-<start>-<n>": the owner's process id,
// its start time (clock ticks since boot, from /proc/<pid>/stat, so that a
// reused pid is not taken for the owner) and a sequence number. Its veth
// pair has one end (Outer) in the caller's namespace and the other
// (Inner) in the new one; both are up, IPv6 is off on both (no router
// solicitations or DAD frames), and the namespace's loopback is up.
//
// It needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN) and the ip tool of
// iproute2; New says which is missing.
package netns

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wpg-dev/wpg/internal/sys"
)

// Prefix begins the name of every namespace this package creates.
const Prefix = "wpg-"

// runDir is where ip netns keeps its named namespaces.
const runDir = "/run/netns"

// NS is one namespace with its veth pair. Its methods are safe for
// concurrent use; Close is idempotent.
type NS struct {
	// Name is the namespace's name (ip netns), /run/netns/Name.
	Name string
	// Outer is the veth end in the caller's namespace, Inner the end
	// inside the namespace.
	Outer, Inner string

	once sync.Once
	err  error
}

var seq atomic.Uint32

// Options tune New.
type Options struct {
	// MTU of both veth ends (0: the kernel's default, 1500).
	MTU int
}

// New creates a namespace and its veth pair. On any failure what was
// created is removed again before it returns.
func New(ctx context.Context, o Options) (*NS, error) {
	if o.MTU < 0 || o.MTU > 65535 {
		return nil, fmt.Errorf("netns: MTU %d: give 68 to 65535, or 0 for the default", o.MTU)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, fmt.Errorf("netns: the ip tool (iproute2) is needed: %w", err)
	}
	pid := os.Getpid()
	start, err := startTime(pid)
	if err != nil {
		return nil, fmt.Errorf("netns: %w", err)
	}
	n := seq.Add(1) % 100
	ns := &NS{
		Name:  fmt.Sprintf("%s%d-%d-%d", Prefix, pid, start, n),
		Outer: fmt.Sprintf("wpg%dx%da", pid, n),
		Inner: fmt.Sprintf("wpg%dx%db", pid, n),
	}
	if err := ip(ctx, "netns", "add", ns.Name); err != nil {
		if isPermission(err) {
			return nil, fmt.Errorf("netns: creating a network namespace needs root (CAP_SYS_ADMIN): %w", err)
		}
		return nil, err
	}
	steps := [][]string{
		{"link", "add", ns.Outer, "type", "veth", "peer", "name", ns.Inner, "netns", ns.Name},
	}
	if o.MTU > 0 {
		m := strconv.Itoa(o.MTU)
		steps = append(steps, []string{"link", "set", ns.Outer, "mtu", m}, []string{"-n", ns.Name, "link", "set", ns.Inner, "mtu", m})
	}
	steps = append(steps,
		[]string{"-n", ns.Name, "link", "set", "lo", "up"},
		[]string{"netns", "exec", ns.Name, "sysctl", "-qw", "net.ipv6.conf." + ns.Inner + ".disable_ipv6=1"},
		[]string{"-n", ns.Name, "link", "set", ns.Inner, "up"},
		[]string{"link", "set", ns.Outer, "up"},
	)
	for i, args := range steps {
		if i == 1 {
			// Off before the link goes up: no DAD or router solicitation.
			_ = os.WriteFile("/proc/sys/net/ipv6/conf/"+ns.Outer+"/disable_ipv6", []byte("1"), 0)
		}
		if err := ip(ctx, args...); err != nil {
			if cerr := ns.Close(); cerr != nil {
				err = errors.Join(err, cerr)
			}
			return nil, err
		}
	}
	return ns, nil
}

// Path is the namespace's file, for setns(2).
func (n *NS) Path() string { return filepath.Join(runDir, n.Name) }

// Command returns a command that runs name with args inside the namespace
// (ip netns exec).
func (n *NS) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", n.Name, name}, args...)...)
}

// Do runs f on a locked OS thread inside the namespace; sockets f opens
// stay there after it returns. The thread is never handed back to the
// scheduler in the foreign namespace.
func (n *NS) Do(f func() error) error { return sys.RunInNetns(n.Path(), f) }

// Close removes the namespace, and with it the veth pair (deleting one
// end deletes both). It is idempotent; it does not take a context, so
// that a cancelled run still cleans up.
func (n *NS) Close() error {
	n.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		n.err = ip(ctx, "netns", "del", n.Name)
		// The kernel tears a deleted namespace down in the background, and
		// the pair goes with it a moment later: wait for that (up to a
		// second) before deleting the outer end by hand, which is needed
		// only when the inner end never moved into the namespace.
		outer := "/sys/class/net/" + n.Outer
		for range 50 {
			if _, err := os.Stat(outer); err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := ip(ctx, "link", "del", n.Outer); err != nil && n.err == nil {
			if _, serr := os.Stat(outer); serr == nil {
				n.err = err // still there: a real failure
			}
		}
	})
	return n.err
}

// Owner parses a name of this package's namespaces into the owner's pid
// and start time; ok is false for any other name (another tool's
// namespace, a test's "wpgtest-…").
func Owner(name string) (pid int, start uint64, ok bool) {
	rest, found := strings.CutPrefix(name, Prefix)
	if !found {
		return 0, 0, false
	}
	f := strings.Split(rest, "-")
	if len(f) != 3 {
		return 0, 0, false
	}
	p, err1 := strconv.Atoi(f[0])
	s, err2 := strconv.ParseUint(f[1], 10, 64)
	_, err3 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil || err3 != nil || p <= 0 {
		return 0, 0, false
	}
	return p, s, true
}

// Stale lists the namespaces of this package in dir (ip netns's
// /run/netns) whose owner is no longer running, as alive says for a pid
// and start time.
func Stale(dir string, alive func(pid int, start uint64) bool) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("netns: list %s: %w", dir, err)
	}
	var out []string
	for _, e := range ents {
		pid, start, ok := Owner(e.Name())
		if ok && !alive(pid, start) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// CleanStale removes the namespaces (and so their veth pairs) that a wpg
// process created and left behind when it died without closing them,
// and returns their names. Namespaces of running processes are left
// alone.
func CleanStale(ctx context.Context) ([]string, error) {
	names, err := Stale(runDir, Alive)
	if err != nil {
		return nil, err
	}
	var errs []error
	var removed []string
	for _, name := range names {
		if err := ip(ctx, "netns", "del", name); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, name)
	}
	return removed, errors.Join(errs...)
}

// Alive reports whether process pid is running and started at start
// (clock ticks since boot, /proc/PID/stat field 22).
func Alive(pid int, start uint64) bool {
	s, err := startTime(pid)
	return err == nil && s == start
}

// startTime reads the start time of process pid.
func startTime(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStartTime(string(b))
}

// parseStartTime takes field 22 (starttime) of a /proc/PID/stat line. The
// command name (field 2) is in parentheses and may hold spaces and
// parentheses itself, so the fields are counted after its last ')'.
func parseStartTime(stat string) (uint64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("proc stat %q: no command name", stat)
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state); starttime is field 22.
	if len(f) < 20 {
		return 0, fmt.Errorf("proc stat: %d fields after the command name, want at least 20", len(f))
	}
	v, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("proc stat: starttime %q: %w", f[19], err)
	}
	return v, nil
}

// isPermission reports whether an ip command failed for want of
// privileges.
func isPermission(err error) bool {
	return errors.Is(err, os.ErrPermission) || strings.Contains(err.Error(), "Operation not permitted")
}

func ip(ctx context.Context, args ...string) error {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "ip", args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out.Bytes()))
	}
	return nil
}
