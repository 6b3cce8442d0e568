package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	t.Setenv("WPG_CONFIG", "")
	t.Chdir(t.TempDir()) // no ./wpg.toml
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestPreviewDefault(t *testing.T) {
	out, errs, code := runCLI(t, "preview", "-n", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"frame 0: stream 0 (udp64) seq 0, 64 bytes", "UDP          1024 → 9", "frame 1:", "UDP          1025 → 9", "checksum", "ok", "00000030"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "BAD") {
		t.Errorf("bad checksum in preview:\n%s", out)
	}
}

func TestPreviewCap(t *testing.T) {
	_, errs, code := runCLI(t, "preview", "-n", "257")
	if code == 0 || !strings.Contains(errs, "server.preview_max = 256") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}

func TestPreviewBadTemplate(t *testing.T) {
	_, errs, code := runCLI(t, "preview", "/nonexistent/x.wpg.yaml")
	if code == 0 || !strings.Contains(errs, "no such file") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}

func TestPreviewJSON(t *testing.T) {
	out, errs, code := runCLI(t, "preview", "--json", "-n", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Template string `json:"template"`
		Frames   []struct {
			Index  int    `json:"index"`
			Stream int    `json:"stream"`
			Seq    uint64 `json:"seq"`
			Len    int    `json:"len"`
			Bytes  []byte `json:"bytes"`
			Layers []struct {
				Name, Summary string
			} `json:"layers"`
		} `json:"frames"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(doc.Frames) != 3 || doc.Frames[2].Seq != 2 || doc.Frames[2].Len != 64 || len(doc.Frames[2].Bytes) != 64 || len(doc.Frames[0].Layers) != 4 || doc.Frames[0].Layers[2].Name != "UDP" {
		t.Fatalf("unexpected JSON: %+v", doc)
	}
}

// Preview's port flags go together: each missing half is one line naming
// what to add (exit 2), before anything is sent.
func TestPreviewPortFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--src-ip", "198.18.0.1/24"}, "--src-ip 198.18.0.1/24: preview resolves the gateway on a port: add -i PORT"},
		{[]string{"-i", "lo"}, "-i lo: preview resolves a port's gateway, and no address is given"},
		{[]string{"--gateway", "198.18.0.254"}, "--gateway 198.18.0.254: needs the port's own address"},
		{[]string{"-i", "lo", "--src-ip", "198.18.0.1/24", "--gateway", "198.19.0.254"}, "--gateway 198.19.0.254: is outside the port's subnet 198.18.0.0/24"},
	} {
		_, errs, code := runCLI(t, append([]string{"preview"}, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
}

// wpg.toml's [port] addresses are checked where the file gives them: a
// gateway outside the port's subnet, or without the port's address, is
// one line naming the file's line and the key (exit 2).
func TestConfigPortsChecked(t *testing.T) {
	for _, c := range []struct{ toml, want string }{
		{"[port]\nsrc_ip = \"198.18.0.1/24\"\ngateway = \"198.19.0.254\"\n", `wpg.toml:3: port.gateway "198.19.0.254": is outside the port's subnet 198.18.0.0/24`},
		{"[port]\nrx_gateway = \"198.19.0.254\"\n", `wpg.toml:2: port.rx_gateway "198.19.0.254": needs the port's own address`},
		{"[port]\nsrc_ip = \"198.18.0.1\"\n", `wpg.toml:2:10: port.src_ip: "198.18.0.1" has no prefix length`}, // read with the file, its column named
	} {
		cfg := filepath.Join(t.TempDir(), "wpg.toml")
		if err := os.WriteFile(cfg, []byte(c.toml), 0o644); err != nil {
			t.Fatal(err)
		}
		_, errs, code := runCLI(t, "send", "--config", cfg, "--count", "1")
		if code != 2 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%q: exit %d, %q; want 2 and %q", c.toml, code, errs, c.want)
		}
	}
}

// A port address from wpg.toml's [port] of the other family than the
// streams is named by its key and place, not as --src-ip, a flag the user
// never gave (send and bench).
func TestConfigPortFamily(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "wpg.toml")
	tpl := filepath.Join(dir, "v6.wpg.yaml")
	if err := os.WriteFile(cfg, []byte("[port]\nsrc_ip = \"198.18.0.1/24\"\ngateway = \"198.18.0.254\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tpl, []byte("streams:\n  - ipv6: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "port.src_ip (" + cfg + ":2) 198.18.0.1/24: is IPv4, and stream 0 (stream0) is IPv6"
	for _, command := range []string{"send", "bench"} {
		_, errs, code := runCLI(t, command, tpl, "--config", cfg, "-i", "lo", "--count", "1")
		if code != 2 || !strings.Contains(errs, want) || strings.Contains(errs, "src-ip") {
			t.Errorf("%s: exit %d, %q; want 2 and %q", command, code, errs, want)
		}
	}
}

// wpg preview -i takes the port's address from wpg.toml's [port] too, as
// wpg send does (docs/device.md): it said "no address is given", and
// showed the frames of a run other than the one send would make.
func TestPreviewConfigPort(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "wpg.toml")
	if err := os.WriteFile(cfg, []byte("[port]\nsrc_ip = \"198.18.0.1/24\"\ngateway = \"198.19.0.254\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code := runCLI(t, "preview", "--config", cfg, "-i", "lo")
	want := "port.gateway (" + cfg + ":3) 198.19.0.254: is outside the port's subnet 198.18.0.0/24"
	if code != 2 || !strings.Contains(errs, want) {
		t.Errorf("exit %d, %q; want 2 and %q", code, errs, want)
	}
}
