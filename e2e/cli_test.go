package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// run runs wpg with args in dir and returns stdout, stderr and the exit code.
func run(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(testbed.Wpg(t), args...)
	cmd.Dir = dir
	return runCmd(t, cmd)
}

// writeIn writes body to the file name in dir and returns its path.
func writeIn(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runCmd runs cmd and returns stdout, stderr and the exit code; it fails
// the test only when the command cannot be run at all.
func runCmd(t *testing.T, cmd *exec.Cmd) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func TestBadInputGivesOneLineErrorWithFix(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string { return writeIn(t, dir, name, body) }
	badConfigDir := filepath.Join(dir, "cfg-unknown")
	os.Mkdir(badConfigDir, 0o755)
	os.WriteFile(filepath.Join(badConfigDir, "wpg.toml"), []byte("[tx]\nring_byte = 5\n"), 0o644)
	badValueDir := filepath.Join(dir, "cfg-value")
	os.Mkdir(badValueDir, 0o755)
	os.WriteFile(filepath.Join(badValueDir, "wpg.toml"), []byte("[server]\npreview_max = -3\n"), 0o644)
	malformed := write("malformed.wpg.yaml", "streams:\n  - name: a\n    size: [64\n")
	unknownKey := write("unknown.wpg.yaml", "streams:\n  - name: a\n    size: 64\n    colour: blue\n    ipv4: {src: 198.18.0.1, dst: 198.19.0.1}\n    udp: {src: 1, dst: 2}\n")
	badPort := write("port.wpg.yaml", "streams:\n  - name: a\n    size: 64\n    ipv4: {src: 198.18.0.1, dst: 198.19.0.1}\n    udp: {src: 70000, dst: 2}\n")
	v6in4 := write("v6in4.wpg.yaml", "streams:\n  - name: a\n    size: 64\n    ipv4: {src: \"2001:db8::1\", dst: 198.19.0.1}\n    udp: {src: 1, dst: 2}\n")
	tooSmall := write("small.wpg.yaml", "streams:\n  - name: a\n    size: 40\n    ipv4: {src: 198.18.0.1, dst: 198.19.0.1}\n    udp: {src: 1, dst: 2}\n")

	cases := []struct {
		name string
		dir  string
		args []string
		want []string // all must appear in the one-line error
	}{
		{"malformed YAML", dir, []string{"send", malformed, "--count", "1"}, []string{"malformed.wpg.yaml:3:"}},
		{"unknown template key", dir, []string{"send", unknownKey, "--count", "1"}, []string{"unknown.wpg.yaml:4:5", "colour"}},
		{"port out of range", dir, []string{"send", badPort, "--count", "1"}, []string{"port.wpg.yaml:5:", "70000", "udp.src"}},
		{"IPv6 address in IPv4 field", dir, []string{"send", v6in4, "--count", "1"}, []string{"v6in4.wpg.yaml:4:", "IPv6", "ipv4.src"}},
		{"frame below header length", dir, []string{"send", tooSmall, "--count", "1"}, []string{"small.wpg.yaml:3:", "40"}},
		{"size with a template file", dir, []string{"send", tooSmall, "--size", "128", "--count", "1"}, []string{"--size", "template"}},
		{"unknown backend", dir, []string{"send", "--backend", "carrier-pigeon", "--count", "1"}, []string{`carrier-pigeon: is not a backend`, "null", "pcapfile"}},
		{"pcapfile two workers", dir, []string{"send", "--backend", "pcapfile", "-o", "x.pcap", "--workers", "2", "--count", "1"}, []string{"one worker only", "--workers 1"}},
		{"pcapfile without output", dir, []string{"send", "--backend", "pcapfile", "--count", "1"}, []string{"-o FILE"}},
		{"bad rate", dir, []string{"send", "--rate", "fast", "--count", "1"}, []string{"--rate", "fast"}},
		{"bad wait", dir, []string{"send", "--rate", "1kpps", "--wait", "nap", "--count", "1"}, []string{"--wait", "spin"}},
		{"bad wake boost", dir, []string{"send", "--rate", "1kpps", "--wake-boost", "maybe", "--count", "1"}, []string{"--wake-boost", "auto", "off"}},
		{"bad clock", dir, []string{"send", "--clock", "sundial", "--count", "1"}, []string{"--clock", "monotonic"}},
		{"bad plan", dir, []string{"send", "--plan", "later", "--count", "1"}, []string{"--plan", "prerender"}},
		{"zero batch", dir, []string{"send", "--batch", "0", "--count", "1"}, []string{"--batch 0"}},
		{"cpu not allowed", dir, []string{"send", "--pin-core", "4095", "--count", "1"}, []string{"CPU 4095", "allowed"}},
		{"pin-core with two workers", dir, []string{"send", "--pin-core", "0", "--workers", "2", "--count", "1"}, []string{"--pin-core", "--pin-cores"}},
		{"bad ring bytes", dir, []string{"send", "--ring-bytes", "huge", "--count", "1"}, []string{"--ring-bytes", "16MiB"}},
		{"missing template", dir, []string{"send", "nope.wpg.yaml", "--count", "1"}, []string{"nope.wpg.yaml"}},
		{"afpacket without interface", dir, []string{"send", "--backend", "afpacket", "--count", "1"}, []string{"-i IFACE"}},
		{"unknown config key", badConfigDir, []string{"send", "--count", "1"}, []string{"wpg.toml:2:1", `unknown key "tx.ring_byte"`, "tx.ring_bytes"}},
		{"bad config value", badValueDir, []string{"config"}, []string{"wpg.toml:2:15", "server.preview_max", "minimum 1"}},
		{"missing --config file", dir, []string{"config", "--config", "/nonexistent/wpg.toml"}, []string{"--config /nonexistent/wpg.toml", "no such file"}},
		{"payload size too small", dir, []string{"send", "--backend", "memcpy", "--size", "10", "--count", "1"}, []string{"--size", "64"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := run(t, tc.dir, tc.args...)
			if code == 0 {
				t.Fatalf("exit 0, want non-zero; stderr %q", stderr)
			}
			line := strings.TrimRight(stderr, "\n")
			if strings.Count(line, "\n") != 0 || !strings.HasPrefix(line, "wpg: ") {
				t.Fatalf("want one line starting with \"wpg: \", got %q", stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("error %q lacks %q", line, w)
				}
			}
		})
	}
}

func TestBenchNullJSON(t *testing.T) {
	out, stderr, code := run(t, t.TempDir(), "bench", "--backend", "null", "--duration", "300ms", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if rep["schema"] != "wpg.report/v2" || rep["stop"] != "duration" {
		t.Fatalf("schema/stop: %v %v", rep["schema"], rep["stop"])
	}
	if be := rep["backend"].(map[string]any); be["backend"] != "null" {
		t.Fatalf("backend %v", be)
	}
	for _, k := range []string{"frames", "bytes", "seconds", "pps", "bps", "target_pps", "achieved_ratio", "tsc", "lateness_p50_ns", "lateness_p99_ns", "p50_jitter", "p99_jitter", "workers", "plan", "environment"} {
		if _, ok := rep[k]; !ok {
			t.Errorf("report lacks %q", k)
		}
	}
	if rep["frames"].(float64) < 1000 || rep["frame_size"].(float64) != 64 {
		t.Fatalf("frames %v frame_size %v", rep["frames"], rep["frame_size"])
	}
}

func TestSendCountIsExact(t *testing.T) {
	out, stderr, code := run(t, t.TempDir(), "send", "--count", "12345", "--workers", "2", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Frames  uint64
		Stop    string
		Workers []struct{ Frames uint64 }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Frames != 12345 || rep.Stop != "count" || len(rep.Workers) != 2 || rep.Workers[0].Frames != 6173 || rep.Workers[1].Frames != 6172 {
		t.Fatalf("got %+v", rep)
	}
}

func TestCtrlCLeavesValidPcap(t *testing.T) {
	tshark := testbed.RequireTool(t, "tshark", "tshark")
	dir := t.TempDir()
	pcap := filepath.Join(dir, "slow.pcap")
	cmd := exec.Command(testbed.Wpg(t), "send", "--backend", "pcapfile", "-o", pcap, "--rate", "2000pps", "--json")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("wpg after SIGINT: %v: %s", err, errb.String())
	}
	var rep struct {
		Frames uint64
		Stop   string
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("no report after SIGINT: %v: %q", err, out.String())
	}
	if rep.Stop != "signal" || rep.Frames == 0 {
		t.Fatalf("report %+v", rep)
	}
	tcmd := exec.Command(tshark, "-r", pcap, "-T", "fields", "-e", "frame.number")
	var terr bytes.Buffer
	tcmd.Stderr = &terr
	tout, err := tcmd.Output()
	if err != nil {
		t.Fatalf("tshark: %v: %s", err, terr.String())
	}
	lines := strings.Fields(string(tout))
	if uint64(len(lines)) != rep.Frames {
		t.Fatalf("tshark read %d frames, the report says %d", len(lines), rep.Frames)
	}
	if msg := terr.String(); strings.Contains(msg, "cut short") || strings.Contains(msg, "damaged") || strings.Contains(msg, "corrupt") {
		t.Fatalf("tshark: %s", msg)
	}
}

func TestConfigShowsSources(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "wpg.toml"), []byte("[tx]\nring_bytes = \"8MiB\"\n"), 0o644)
	out, stderr, code := run(t, dir, "config")
	if code != 0 {
		t.Fatal(stderr)
	}
	for _, want := range []string{"tx.ring_bytes", "8 MiB", "wpg.toml:2", "tx.prerender_max_bytes", "256 MiB", "default", "server.job_history_db"} {
		if !strings.Contains(out, want) {
			t.Errorf("wpg config output lacks %q:\n%s", want, out)
		}
	}
}

func TestProgressOnlyOnTerminal(t *testing.T) {
	script := testbed.RequireTool(t, "script", "bsdutils")
	wpg := testbed.Wpg(t)
	// On a terminal (script gives the command a pty): progress lines.
	out, err := exec.Command(script, "-qec", wpg+" bench --backend null --duration 1500ms", "/dev/null").CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), " pps  ") || !strings.Contains(string(out), "frames") {
		t.Fatalf("no progress line on a terminal: %q", out)
	}
	// Not a terminal: no progress, only the report.
	_, stderr, code := run(t, t.TempDir(), "bench", "--backend", "null", "--duration", "1500ms")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q: want silence when stderr is not a terminal", code, stderr)
	}
}
