package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSendDefaultsWhereTheyApply: wpg.toml's [send] keys are defaults,
// taken where the run reads them: an interface does not trip "applies to
// afpacket, afxdp" on a backend given by flag that sends on none, a rate
// leaves a template's own schedules alone, and a value the run refuses is
// named by its key and place, not by a flag the user never typed.
func TestSendDefaultsWhereTheyApply(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "wpg.toml")
	os.WriteFile(cfg, []byte("[send]\ninterface = \"lo\"\nrate = \"1mpps\"\nworkers = 2\n\n[profile.many]\nsend.workers = 300\n"), 0o644)
	tpl := filepath.Join(dir, "timed.wpg.yaml")
	os.WriteFile(tpl, []byte("streams:\n  - rate: 1kpps\n    count: 3\n    ipv4: {}\n    udp: {}\n"), 0o644)

	out, errs, code := runCLI(t, "send", "--config", cfg, "--backend", "null", "--count", "10", "--json")
	var rep struct {
		Frames  uint64
		Rate    string
		Workers []struct{}
		Backend struct {
			Backend string
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Frames != 10 || rep.Rate != "1Mpps" || rep.Backend.Backend != "null" || len(rep.Workers) != 2 {
		t.Errorf("--backend null with send.interface = lo: exit %d, %s: %+v", code, errs, rep)
	}
	out, errs, code = runCLI(t, "send", tpl, "--config", cfg, "--backend", "null", "--json")
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Frames != 3 || rep.Rate != "per stream" {
		t.Errorf("timed template with send.rate: exit %d, %s: %+v", code, errs, rep)
	}
	_, errs, code = runCLI(t, "send", "--config", cfg, "--profile", "many", "--backend", "null", "--count", "10")
	if code != 2 || !strings.Contains(errs, `send.workers (profile many, `+cfg+`:7) 300: is outside 1 to 256`) {
		t.Errorf("send.workers = 300: exit %d, %s", code, errs)
	}
}

// An interface from wpg.toml that does not exist is named by its key and
// place, not as -i, a flag the user never gave.
func TestConfigInterfaceNamed(t *testing.T) {
	for _, c := range []struct{ toml, cmd, key string }{
		{"[send]\ninterface = \"wpg-nonesuch0\"\n", "send", "send.interface ("},
		{"[recv]\ninterface = \"wpg-nonesuch0\"\n", "recv", "recv.interface ("},
	} {
		cfg := filepath.Join(t.TempDir(), "wpg.toml")
		if err := os.WriteFile(cfg, []byte(c.toml), 0o644); err != nil {
			t.Fatal(err)
		}
		_, errs, code := runCLI(t, c.cmd, "--config", cfg)
		if code == 0 || !strings.Contains(errs, c.key+cfg+":2): afpacket: interface \"wpg-nonesuch0\": no such network interface") ||
			strings.Contains(errs, "(-i IFACE)") || !strings.Contains(errs, "correct it in "+cfg+", or give -i IFACE") {
			t.Errorf("%s: exit %d, %q; want it named %s…", c.cmd, code, errs, c.key)
		}
	}
}
