package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/syncbuf"
	"github.com/wpg-dev/wpg/internal/testbed"
)

// QA session 7, the network side: what a network engineer trying wpg for
// the first time ran into.

// TestQA7NDRMarksTheWarmup: the uncounted warm-up trial printed a trial
// line like any other ("asked 14.9 kpps … pass") above a table that said
// "trials 1": the line now says what it is.
func TestQA7NDRMarksTheWarmup(t *testing.T) {
	testbed.RequireRoot(t)
	testbed.RequireTool(t, "ip", "iproute2")
	// 10 kpps passes at once: the warm-up, then one counted trial.
	out, errs, code := run(t, t.TempDir(), "ndr", "--sizes", "64", "--trial", "200ms", "--warmup", "200ms", "--max-rate", "10kpps")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	var trials []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, " asked ") {
			trials = append(trials, l)
		}
	}
	if len(trials) != 2 || !strings.Contains(trials[0], "warm-up at --min-rate, not counted") || strings.Contains(trials[1], "warm-up") {
		t.Fatalf("trial lines %q, want the first marked as the warm-up and the second not:\n%s", trials, out)
	}
}

// TestQA7NDRCtrlC: Ctrl-C during wpg ndr printed "stopped by an error
// (below)" and "wpg: ndr: trial at 813 frames/s: context canceled", exit
// 1. A stop signal is how a search is cut short: the table (or the JSON,
// with "interrupted": true) of what was found, exit 0 as send's report on
// a signal, and no namespace left behind.
func TestQA7NDRCtrlC(t *testing.T) {
	testbed.RequireRoot(t)
	testbed.RequireTool(t, "ip", "iproute2")
	for _, jsonOut := range []bool{false, true} {
		args := []string{"ndr", "--sizes", "64,1518", "--trial", "20s", "--warmup", "100ms", "--max-rate", "10kpps"}
		if jsonOut {
			args = append(args, "--json")
		}
		cmd := exec.Command(testbed.Wpg(t), args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Into the first counted trial (20 s): once the namespace of the
		// search exists, its 100 ms warm-up is all that comes before it
		// (a fixed sleep from the start raced a loaded machine's set-up).
		prefix := fmt.Sprintf("wpg-%d-", cmd.Process.Pid)
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if list, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(list), prefix) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("json=%v: no namespace %s… after 30 s", jsonOut, prefix)
			}
		}
		time.Sleep(1500 * time.Millisecond)
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		if err != nil || strings.Contains(errb.String(), "context canceled") || strings.Contains(out.String(), "error") {
			t.Fatalf("json=%v: %v\nstdout:\n%s\nstderr:\n%s", jsonOut, err, out.String(), errb.String())
		}
		var ns string
		if jsonOut {
			var rep struct {
				Interrupted bool   `json:"interrupted"`
				Namespace   string `json:"namespace"`
				Sizes       []struct {
					Size int `json:"size"`
				} `json:"sizes"`
			}
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil || !rep.Interrupted || len(rep.Sizes) != 1 || rep.Sizes[0].Size != 64 {
				t.Fatalf("json: %v %+v\n%s", err, rep, out.String())
			}
			ns = rep.Namespace
		} else {
			if !strings.Contains(out.String(), "interrupted (a stop signal)") || !strings.Contains(out.String(), "(interrupted after") {
				t.Fatalf("table does not say it was interrupted:\n%s", out.String())
			}
			_, rest, _ := strings.Cut(out.String(), "(namespace ")
			ns, _, _ = strings.Cut(rest, ")")
		}
		list, err := exec.Command("ip", "netns", "list").Output()
		if err != nil {
			t.Fatal(err)
		}
		if ns == "" || strings.Contains(string(list), ns) {
			t.Fatalf("json=%v: namespace %q left behind (or not named):\n%s", jsonOut, ns, list)
		}
	}
}

// TestQA7NoCarrierNoted: with the veth's peer down, wpg send -i reported
// 100,000 frames sent and nothing else, while the device dropped every
// one. The report notes it; with the peer up it does not.
func TestQA7NoCarrierNoted(t *testing.T) {
	v := testbed.NewVeth(t)
	for _, peer := range []string{"down", "up"} {
		if out, err := exec.Command("ip", "-n", v.NS, "link", "set", v.Inner, peer).CombinedOutput(); err != nil {
			t.Fatalf("ip link set %s %s: %v: %s", v.Inner, peer, err, out)
		}
		// The operstate follows the peer once the kernel's link watch has
		// run (up to a second later: it batches events).
		for i := 0; i < 250; i++ {
			if b, _ := os.ReadFile("/sys/class/net/" + v.Outer + "/operstate"); (strings.TrimSpace(string(b)) == "up") == (peer == "up") {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		out, errs, code := run(t, t.TempDir(), "send", "-i", v.Outer, "--count", "100", "--json")
		if code != 0 {
			t.Fatalf("peer %s: exit %d: %s", peer, code, errs)
		}
		var rep struct {
			Frames uint64   `json:"frames"`
			Notes  []string `json:"notes"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Frames != 100 {
			t.Fatalf("peer %s: %v %+v", peer, err, rep)
		}
		noted := strings.Contains(strings.Join(rep.Notes, "\n"), v.Outer+" has no carrier")
		if noted != (peer == "down") {
			t.Errorf("peer %s: notes %q", peer, rep.Notes)
		}
	}
}

// TestQA7RecvSaysNothingArrived: wpg recv -i X beside wpg send -i X (the
// same end of the pair) printed "frames 0" and nothing else, the receiver
// never counting the host's own outgoing frames. Its report now says
// nothing arrived and where to send instead; a receiver on the other end
// gets the frames and no such note.
func TestQA7RecvSaysNothingArrived(t *testing.T) {
	v := testbed.NewVeth(t)
	for _, c := range []struct {
		name string
		recv *exec.Cmd
		want bool
	}{
		{"same end", exec.Command(testbed.Wpg(t), "recv", "-i", v.Outer, "--duration", "3s", "--json"), true},
		{"other end", v.Command(t.Context(), testbed.Wpg(t), "recv", "-i", v.Inner, "--duration", "3s", "--json"), false},
	} {
		var out bytes.Buffer
		var errb syncbuf.Buffer
		c.recv.Stdout, c.recv.Stderr = &out, &errb
		if err := c.recv.Start(); err != nil {
			t.Fatal(err)
		}
		// Send once the receiver says it is receiving (its --duration
		// leaves the 0.1 s send seconds to spare on a loaded machine).
		for deadline := time.Now().Add(30 * time.Second); !strings.Contains(errb.String(), "receiving on"); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the receiver did not start within 30 s: %s", c.name, errb.String())
			}
		}
		if _, errs, code := run(t, t.TempDir(), "send", "-i", v.Outer, "--count", "100", "--rate", "1kpps"); code != 0 {
			t.Fatalf("%s: send exit %d: %s", c.name, code, errs)
		}
		if err := c.recv.Wait(); err != nil {
			t.Fatalf("%s: recv: %v: %s", c.name, err, errb.String())
		}
		var rep struct {
			Frames  uint64 `json:"frames"`
			Backend struct {
				Hint string `json:"hint"`
			} `json:"backend"`
		}
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, out.String())
		}
		noted := strings.HasPrefix(rep.Backend.Hint, "nothing arrived on ")
		if noted != c.want || (c.want && rep.Frames != 0) || (!c.want && rep.Frames != 100) {
			t.Errorf("%s: frames %d, hint %q", c.name, rep.Frames, rep.Backend.Hint)
		}
	}
}
