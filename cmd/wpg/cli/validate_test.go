package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/job"
)

// wpg runs the CLI in-process and returns stdout, stderr and the exit code.
func wpg(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	code := Main(ctx, args, &out, &errb)
	return out.String(), errb.String(), code
}

// usageCase is a command line that must be refused before anything runs:
// exit 2 and one line that contains every string in want.
type usageCase struct {
	name string
	args []string
	want []string
}

func checkUsage(t *testing.T, cases []usageCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errs, code := wpg(t, c.args...)
			if code != ExitUsage {
				t.Fatalf("wpg %s: exit %d, want %d (usage); stderr %q, stdout %q", strings.Join(c.args, " "), code, ExitUsage, errs, out)
			}
			line := strings.TrimRight(errs, "\n")
			if strings.Contains(line, "\n") || !strings.HasPrefix(line, "wpg: ") {
				t.Fatalf("want one line starting with \"wpg: \", got %q", errs)
			}
			for _, w := range c.want {
				if !strings.Contains(line, w) {
					t.Errorf("error %q lacks %q", line, w)
				}
			}
			if out != "" {
				t.Errorf("a refused command printed a report: %q", out)
			}
		})
	}
}

// Issue #17 item 34: usage errors exit 2, whatever the command; cobra's own
// errors (unknown command, flag, argument count) included, and a bad
// template or configuration file is input too.
func TestUsageErrorsExit2(t *testing.T) {
	dir := t.TempDir()
	checkUsage(t, []usageCase{
		{"unknown command", []string{"frobnicate"}, []string{`unknown command "frobnicate"`}},
		{"unknown flag", []string{"send", "--bogus"}, []string{"--bogus", "wpg send --help"}},
		{"too many arguments", []string{"send", "a.wpg.yaml", "b.wpg.yaml"}, []string{"at most 1 arg", "usage: wpg send [TEMPLATE.wpg.yaml]"}},
		{"sysinfo takes no argument", []string{"sysinfo", "extra"}, []string{"extra"}},
		{"missing template", []string{"send", dir + "/nope.wpg.yaml", "--count", "1"}, []string{"nope.wpg.yaml"}},
		{"missing template preview", []string{"preview", dir + "/nope.wpg.yaml"}, []string{"nope.wpg.yaml"}},
		{"missing config", []string{"config", "--config", dir + "/none.toml"}, []string{"none.toml"}},
		{"unknown backend", []string{"send", "--backend", "carrier-pigeon"}, []string{"carrier-pigeon"}},
		{"bad rate", []string{"bench", "--backend", "null", "--rate", "fast"}, []string{"--rate", "fast"}},
		{"recv without a source", []string{"recv"}, []string{"-i IFACE"}},
		{"membench bad iters", []string{"membench", "--iters", "0"}, []string{"--iters 0"}},
		{"bad preview count", []string{"preview", "-n", "0"}, []string{"-n 0"}},
	})
}

// Issue #17 item 34: a runtime error (the input was fine, the run failed)
// stays exit 1.
func TestRuntimeErrorExit1(t *testing.T) {
	_, errs, code := wpg(t, "send", "--backend", "pcapfile", "-o", t.TempDir()+"/no/such/dir/x.pcap", "--count", "1")
	if code != ExitRuntime {
		t.Fatalf("exit %d, want %d (runtime); stderr %q", code, ExitRuntime, errs)
	}
}

// Issue #17 item 32 (flag parsing): pflag's raw parse errors become
// `flag --X: value "V": reason; fix`, on every command.
func TestFlagParseErrorsSayHowToFix(t *testing.T) {
	checkUsage(t, []usageCase{
		{"negative count", []string{"send", "--count", "-5"}, []string{`flag --count: value "-5"`, "must not be negative", "--count 1000"}},
		{"count not a number", []string{"send", "--count", "many"}, []string{`flag --count: value "many"`, "whole number"}},
		{"count too large", []string{"bench", "--count", "99999999999999999999999"}, []string{"--count", "too large"}},
		{"duration without unit", []string{"send", "--duration", "10"}, []string{`flag --duration: value "10"`, "missing unit", "write 10s"}},
		{"duration garbage", []string{"bench", "--duration", "soon"}, []string{`flag --duration: value "soon"`, "10s"}},
		{"workers not a number", []string{"send", "--workers", "two"}, []string{`flag --workers: value "two"`, "--workers 1"}},
		{"recv idle timeout without unit", []string{"recv", "--idle-timeout", "2"}, []string{"--idle-timeout", "write 2s"}},
		{"sysinfo stalls without unit", []string{"sysinfo", "--stalls", "2"}, []string{"--stalls", "write 2s"}},
		{"preview shorthand", []string{"preview", "-n", "x"}, []string{`flag -n/--frames: value "x"`, "whole number"}},
		{"membench iters", []string{"membench", "--iters", "1.5"}, []string{`flag --iters: value "1.5"`, "whole number"}},
		{"fail-under not a number", []string{"send", "--fail-under", "most"}, []string{`flag --fail-under: value "most"`, "number"}},
		{"value missing", []string{"send", "--count"}, []string{"flag --count needs a value", "--count 1000"}},
	})
	for _, c := range []usageCase{{"", []string{"send", "--count", "-5"}, nil}, {"", []string{"send", "--duration", "10"}, nil}} {
		_, errs, _ := wpg(t, c.args...)
		for _, raw := range []string{"strconv.", "time: ", "invalid argument"} {
			if strings.Contains(errs, raw) {
				t.Errorf("wpg %s: raw parser text %q in %q", strings.Join(c.args, " "), raw, errs)
			}
		}
	}
}

// Issue #17 item 8: nonsense values are refused before the run, with the
// range or the fix.
func TestNonsenseValuesRefused(t *testing.T) {
	allowed, err := sys.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	cases := []usageCase{
		{"negative duration", []string{"send", "--duration", "-1s"}, []string{"--duration -1s", "negative"}},
		{"pin-core below -1", []string{"send", "--pin-core", "-2", "--count", "1"}, []string{"--pin-core -2"}},
		{"pin-cores twice the same CPU", []string{"send", "--workers", "2", "--pin-cores", fmt.Sprintf("%d,%d", allowed[0], allowed[0]), "--count", "1"}, []string{"--pin-cores", "twice", "its own CPU"}},
		{"pin-cores huge range", []string{"send", "--pin-cores", "0-99999999", "--count", "1"}, []string{"--pin-cores", "0-99999999", "outside", job.FormatCPUList(allowed)}},
		{"negative slots", []string{"send", "--backend", "shm", "--slots", "-1", "--count", "1"}, []string{"--slots -1"}},
		{"recv negative slots", []string{"recv", "--backend", "shm", "--slots", "-1"}, []string{"--slots -1"}},
		{"sysinfo negative stalls", []string{"sysinfo", "--stalls", "-1s"}, []string{"--stalls -1s", "negative"}},
		{"sysinfo zero stall-min", []string{"sysinfo", "--stalls", "1ms", "--stall-min", "0s"}, []string{"--stall-min"}},
		{"too many workers", []string{"send", "--workers", "100000", "--count", "1"}, []string{"--workers 100000", "256"}},
		{"257 workers", []string{"bench", "--backend", "null", "--workers", "257"}, []string{"--workers 257", "256"}},
		{"two pinning flags", []string{"send", "--pin-core", fmt.Sprint(allowed[0]), "--auto-pin", "--count", "1"}, []string{"--pin-core", "--auto-pin", "only one"}},
		{"bench raw into its own receiver", []string{"bench", "--backend", "pipe", "--raw"}, []string{"--raw", "receiver"}},
		{"pcap-speed 0", []string{"send", "--backend", "null", "--pcap-speed", "0", "--count", "1"}, []string{"--pcap-speed 0", "from 0.001 to 1000000", "--rate max"}},
		{"pcap-speed without pcap", []string{"send", "--backend", "null", "--pcap-speed", "2", "--count", "1"}, []string{"--pcap-speed 2", "add --pcap FILE"}},
	}
	checkUsage(t, cases)
}

// Issue #17 item 8: more workers than the CPUs the process may use is
// allowed (up to 256) but the report says what it costs.
func TestWorkersOverCPUsNote(t *testing.T) {
	allowed, err := sys.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	n := len(allowed) + 1
	out, errs, code := wpg(t, "send", "--workers", fmt.Sprint(n), "--count", "100", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep struct{ Notes []string }
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("--workers %d on %d CPUs", n, len(allowed))
	for _, note := range rep.Notes {
		if strings.Contains(note, want) {
			return
		}
	}
	t.Fatalf("no note %q in %q", want, rep.Notes)
}

// Issue #17 item 9: a backend-specific flag set for a backend it does
// nothing for is a usage error naming the backends it applies to; so are
// payload flags with templates, template flags with payload frames, rate
// flags without a rate, and TX-ring flags with --no-tx-ring.
func TestFlagsThatDoNotApply(t *testing.T) {
	dir := t.TempDir()
	checkUsage(t, []usageCase{
		{"qdisc-bypass on null", []string{"send", "--backend", "null", "--qdisc-bypass", "--count", "1"}, []string{"--qdisc-bypass", "afpacket", "null"}},
		{"xdp-mode on null", []string{"send", "--xdp-mode", "native", "--count", "1"}, []string{"--xdp-mode", "afxdp"}},
		{"format pcapng on null", []string{"send", "--format", "pcapng", "--count", "1"}, []string{"--format", "pcapfile", "null"}},
		{"output on null", []string{"send", "-o", dir + "/x.pcap", "--count", "1"}, []string{"--output", "pcapfile"}},
		{"vmsplice on null", []string{"send", "--vmsplice", "--count", "1"}, []string{"--vmsplice", "pipe"}},
		{"ring-depth on pcapfile", []string{"send", "--backend", "pcapfile", "-o", dir + "/x.pcap", "--ring-depth", "3", "--count", "1"}, []string{"--ring-depth", "afpacket", "pcapfile"}},
		{"interface on pcapfile", []string{"send", "--backend", "pcapfile", "-o", dir + "/x.pcap", "-i", "lo", "--count", "1"}, []string{"-i/--interface", "afpacket"}},
		{"slots on pipe", []string{"bench", "--backend", "pipe", "--slots", "8"}, []string{"--slots", "cma", "shm", "xpmem", "pipe"}},
		{"busy-wait on unix", []string{"bench", "--backend", "unix", "--busy-wait"}, []string{"--busy-wait", "shm", "unix"}},
		{"pipe-size on shm", []string{"bench", "--backend", "shm", "--pipe-size", "64KiB"}, []string{"--pipe-size", "pipe", "shm"}},
		{"connect on memcpy", []string{"send", "--backend", "memcpy", "--connect", dir + "/s", "--count", "1"}, []string{"--connect", "shm", "memcpy"}},
		{"fill random with a template", []string{"send", "--fill", "random", "--count", "1"}, []string{"--fill", "payload frames", "shm"}},
		{"seed with a template", []string{"send", "--seed", "7", "--count", "1"}, []string{"--seed", "payload frames"}},
		{"raw on null", []string{"send", "--raw", "--count", "1"}, []string{"--raw", "payload frames"}},
		{"verify on null", []string{"send", "--verify", "off", "--count", "1"}, []string{"--verify", "payload frames"}},
		{"seed without fill random", []string{"send", "--backend", "memcpy", "--seed", "7", "--count", "1"}, []string{"--seed", "--fill random"}},
		{"plan with payload frames", []string{"send", "--backend", "memcpy", "--plan", "stream", "--count", "1"}, []string{"--plan", "packet templates", "memcpy"}},
		{"template with payload frames", []string{"send", "--backend", "memcpy", "x.wpg.yaml", "--count", "1"}, []string{"memcpy", "payload frames", "x.wpg.yaml"}},
		{"wait without rate", []string{"send", "--wait", "spin", "--count", "1"}, []string{"--wait", "--rate"}},
		{"burst without rate", []string{"bench", "--backend", "null", "--burst", "8"}, []string{"--burst", "--rate"}},
		{"ring-depth with no-tx-ring", []string{"send", "-i", "lo", "--no-tx-ring", "--ring-depth", "64", "--count", "1"}, []string{"--ring-depth", "--no-tx-ring"}},
		{"recv interface on pipe", []string{"recv", "--backend", "pipe", "-i", "lo"}, []string{"-i/--interface", "afpacket", "pipe"}},
		{"recv no-rx-ring on shm", []string{"recv", "--backend", "shm", "--no-rx-ring"}, []string{"--no-rx-ring", "afpacket"}},
		{"recv listen on pipe", []string{"recv", "--backend", "pipe", "--listen", dir + "/s"}, []string{"--listen", "shm", "pipe"}},
		{"recv verify on afpacket", []string{"recv", "-i", "lo", "--verify", "off"}, []string{"--verify", "payload frames"}},
	})
	// Defaults never trip the rule, and the flags work where they apply.
	if _, errs, code := wpg(t, "send", "--backend", "pcapfile", "-o", dir+"/ok.pcap", "--format", "pcapng", "--count", "3"); code != 0 {
		t.Errorf("--format on pcapfile: exit %d: %s", code, errs)
	}
	if _, errs, code := wpg(t, "send", "--backend", "memcpy", "--fill", "random", "--seed", "7", "--count", "3"); code != 0 {
		t.Errorf("--fill random --seed on memcpy: exit %d: %s", code, errs)
	}
}

// Issue #17 items 9 and 34: values only a backend knows (--format,
// --recv-mode) are checked before anything runs: a usage error, not a
// worker failing at open (or a receiver process dying).
func TestBackendValuesCheckedBeforeRun(t *testing.T) {
	dir := t.TempDir()
	checkUsage(t, []usageCase{
		{"pcapfile format", []string{"send", "--backend", "pcapfile", "-o", dir + "/x.pcap", "--format", "pcapx", "--count", "1"}, []string{"--format", "pcapx", "pcapng"}},
		{"shm recv-mode", []string{"send", "--backend", "shm", "--recv-mode", "bogus", "--count", "1"}, []string{"--recv-mode", "bogus", "inplace", "copy"}},
		{"cma recv-mode", []string{"bench", "--backend", "cma", "--recv-mode", "copy"}, []string{"--recv-mode", "copy", "readv", "writev"}},
		{"recv shm recv-mode", []string{"recv", "--backend", "shm", "--recv-mode", "bogus"}, []string{"--recv-mode", "bogus"}},
	})
}

// Issue #17 item 10: --rate 0 means flat out in every unit.
func TestRateZeroIsFlatOut(t *testing.T) {
	for _, r := range []string{"0", "0pps", "0kpps", "0fps", "0Gbps", "0bps", "ifg=0"} {
		out, errs, code := wpg(t, "send", "--rate", r, "--count", "5", "--json")
		if code != 0 {
			t.Fatalf("--rate %s: exit %d: %s", r, code, errs)
		}
		var rep struct {
			Frames    uint64
			Rate      string
			TargetPPS float64 `json:"target_pps"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Frames != 5 || rep.Rate != "" || rep.TargetPPS != 0 {
			t.Errorf("--rate %s: %+v, want 5 frames flat out", r, rep)
		}
	}
}

// Issue #17 item 5: a rate whose per-worker interval the pacer cannot hold
// is refused with the range, instead of becoming no rate at all.
func TestRateOutOfRangeRefused(t *testing.T) {
	checkUsage(t, []usageCase{
		{"1e-10pps", []string{"send", "--rate", "1e-10pps", "--duration", "1s"}, []string{"--rate 1e-10pps", "years", "give a rate from"}},
		{"1e-9pps over 8 workers", []string{"send", "--rate", "1e-9pps", "--workers", "8", "--duration", "1s"}, []string{"--rate 1e-9pps", "8 worker(s)"}},
		{"1bps of 1500-byte frames over 2 workers... is fine, 1e-15bps is not", []string{"send", "--rate", "1e-15bps", "--duration", "1s"}, []string{"--rate 1e-15bps", "give a rate from"}},
		{"too fast", []string{"send", "--rate", "5e12pps", "--duration", "1s"}, []string{"--rate 5e12pps", "1e+12"}},
	})
}

// Issue #17 item 21 (l1): with --rate-layer l1 the report's bit rate counts
// the 24 bytes the wire adds to every frame, and says so.
func TestRateLayerL1Report(t *testing.T) {
	out, errs, code := wpg(t, "send", "--rate-layer", "l1", "--count", "1000", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep struct {
		Frames, Bytes uint64
		Seconds, BPS  float64
		BPSLayer      string `json:"bps_layer"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	want := float64(rep.Bytes+24*rep.Frames) * 8 / rep.Seconds
	if rep.BPSLayer != "l1" || math.Abs(rep.BPS-want) > 1e-6*want {
		t.Fatalf("bps %v layer %q, want %v at l1", rep.BPS, rep.BPSLayer, want)
	}
	out, errs, code = wpg(t, "send", "--rate-layer", "l1", "--count", "1000")
	if code != 0 || !strings.Contains(out, "(L1)") || strings.Contains(out, "(L2)") {
		t.Fatalf("exit %d, table does not label the rate L1: %s%s", code, out, errs)
	}
	out, _, _ = wpg(t, "send", "--count", "1000")
	if !strings.Contains(out, "(L2)") {
		t.Fatalf("default table does not label the rate L2: %s", out)
	}
}

// Issue #17 item 34: --fail-under needs a rate and a ratio in (0, 1].
func TestFailUnderValidated(t *testing.T) {
	checkUsage(t, []usageCase{
		{"without rate", []string{"send", "--fail-under", "0.9", "--count", "1"}, []string{"--fail-under", "--rate"}},
		{"above 1", []string{"send", "--rate", "1kpps", "--fail-under", "1.5", "--count", "1"}, []string{"--fail-under 1.5", "at most 1"}},
		{"zero", []string{"bench", "--backend", "null", "--rate", "1kpps", "--fail-under", "0"}, []string{"--fail-under 0", "above 0"}},
		{"negative", []string{"send", "--rate", "1kpps", "--fail-under", "-0.5", "--count", "1"}, []string{"--fail-under -0.5"}},
	})
	// A ratio every run reaches passes.
	if _, errs, code := wpg(t, "send", "--rate", "10kpps", "--count", "50", "--fail-under", "0.000001"); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

// Issue #17 item 34: docs/cli.md documents the exit codes.
func TestCLIReferenceHasExitCodes(t *testing.T) {
	var buf bytes.Buffer
	WriteCLIReference(&buf)
	for _, w := range []string{"## Exit codes", "| 1 | runtime error", "| 2 | usage error", "| 3 | a check failed", "--fail-under"} {
		if !strings.Contains(buf.String(), w) {
			t.Errorf("CLI reference lacks %q", w)
		}
	}
}

// The flag table of item 9 stays true: every backend-specific option has
// its flag on send or recv, and every option a backend declares is one of
// them.
func TestBackendFlagsAreKnown(t *testing.T) {
	root := NewRoot()
	has := func(name string) bool {
		for _, c := range root.Commands() {
			if (c.Name() == "send" || c.Name() == "recv") && c.Flags().Lookup(name) != nil {
				return true
			}
		}
		return false
	}
	specific := map[string]bool{}
	for _, name := range backend.SpecificOptions() {
		specific[name] = true
		if flag := fieldFlagName(root, name); !has(flag) {
			t.Errorf("backend.SpecificOptions names %s, whose flag --%s neither send nor recv has", name, flag)
		}
	}
	for _, r := range backend.All() {
		for _, name := range r.Options {
			if !specific[name] {
				t.Errorf("backend %s declares %s, which is not in backend.SpecificOptions", r.Name, name)
			}
		}
	}
}
