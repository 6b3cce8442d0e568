package netns

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/wpg-dev/wpg/internal/testbed"
)

func TestOwner(t *testing.T) {
	for _, c := range []struct {
		name  string
		pid   int
		start uint64
		ok    bool
	}{
		{"wpg-123-456-7", 123, 456, true},
		{"wpg-123-456", 0, 0, false},
		{"wpgtest-1231", 0, 0, false},
		{"wpg-a-456-7", 0, 0, false},
		{"wpg-0-1-1", 0, 0, false},
		{"other", 0, 0, false},
	} {
		pid, start, ok := Owner(c.name)
		if pid != c.pid || start != c.start || ok != c.ok {
			t.Errorf("Owner(%q) = %d, %d, %v; want %d, %d, %v", c.name, pid, start, ok, c.pid, c.start, c.ok)
		}
	}
}

func TestParseStartTime(t *testing.T) {
	// A command name with a space and a parenthesis, as the kernel prints it.
	line := "4242 (wpg (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 3 1 0 0 20 0 2 0 987654 12345678 300 18446744073709551615"
	got, err := parseStartTime(line)
	if err != nil || got != 987654 {
		t.Fatalf("parseStartTime = %d, %v; want 987654", got, err)
	}
	if _, err := parseStartTime("4242 (wpg) S 1"); err == nil {
		t.Fatal("a short line parsed")
	}
}

func TestStaleKeepsLiveOwners(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"wpg-10-5-1", "wpg-11-5-1", "wpgtest-99", "wpg-12-6-0"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	alive := func(pid int, start uint64) bool { return pid == 11 || (pid == 12 && start == 7) }
	got, err := Stale(dir, alive)
	if err != nil {
		t.Fatal(err)
	}
	// 12 runs, but started at another time: a reused pid, not the owner.
	if want := []string{"wpg-10-5-1", "wpg-12-6-0"}; !slices.Equal(got, want) {
		t.Fatalf("Stale = %v, want %v", got, want)
	}
	if got, err := Stale(filepath.Join(dir, "none"), alive); err != nil || got != nil {
		t.Fatalf("missing dir: %v, %v", got, err)
	}
}

func TestAliveSelf(t *testing.T) {
	start, err := startTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !Alive(os.Getpid(), start) || Alive(os.Getpid(), start+1) {
		t.Fatal("Alive does not recognise this process by its start time")
	}
}

func exists(name string) bool {
	_, err := os.Stat(filepath.Join(runDir, name))
	return err == nil
}

func TestNewClose(t *testing.T) {
	testbed.RequireRoot(t)
	testbed.RequireTool(t, "ip", "iproute2")
	ctx := context.Background()
	ns, err := New(ctx, Options{MTU: 9000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Close() })
	if !exists(ns.Name) {
		t.Fatalf("%s not in %s", ns.Name, runDir)
	}
	if _, err := os.Stat("/sys/class/net/" + ns.Outer); err != nil {
		t.Fatalf("outer end: %v", err)
	}
	out, err := ns.Command(ctx, "cat", "/sys/class/net/"+ns.Inner+"/mtu").Output()
	if err != nil || string(out) != "9000\n" {
		t.Fatalf("inner end's MTU: %q, %v", out, err)
	}
	if err := ns.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ns.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if exists(ns.Name) {
		t.Fatalf("%s still there after Close", ns.Name)
	}
	if _, err := os.Stat("/sys/class/net/" + ns.Outer); err == nil {
		t.Fatalf("%s still there after Close", ns.Outer)
	}
}

// TestCleanStale: a namespace whose owner died (a process that ran and
// exited, as after kill -9) goes; one of a live process stays.
func TestCleanStale(t *testing.T) {
	testbed.RequireRoot(t)
	testbed.RequireTool(t, "ip", "iproute2")
	ctx := context.Background()
	child := exec.Command("true")
	if err := child.Run(); err != nil {
		t.Fatal(err)
	}
	dead := "wpg-" + itoa(child.Process.Pid) + "-1-0"
	if err := ip(ctx, "netns", "add", dead); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if exists(dead) {
			ip(ctx, "netns", "del", dead)
		}
	})
	live, err := New(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Close() })
	removed, err := CleanStale(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(removed, dead) || exists(dead) {
		t.Errorf("CleanStale removed %v; %s should be gone", removed, dead)
	}
	if slices.Contains(removed, live.Name) || !exists(live.Name) {
		t.Errorf("CleanStale removed the live namespace %s", live.Name)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
