package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseOverridesDefaultsAndRecordsSource(t *testing.T) {
	c := Default()
	doc := "# wpg\n[tx]\nprerender_max_bytes = \"64MiB\"\nring_bytes = 8388608\n\n[server]\npreview_max = 512\n"
	if err := c.Parse("wpg.toml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	if c.TX.PrerenderMaxBytes != 64<<20 || c.TX.RingBytes != 8<<20 || c.Server.PreviewMax != 512 {
		t.Fatalf("values not applied: %+v %+v", c.TX, c.Server)
	}
	if c.TX.PrerenderMaxPackets != 100_000_000 || c.Server.JobHistory != 100 || c.Server.JobHistoryDB != 1000 {
		t.Fatalf("defaults lost: %+v %+v", c.TX, c.Server)
	}
	for key, want := range map[string]string{
		"tx.prerender_max_bytes": "wpg.toml:3", "tx.ring_bytes": "wpg.toml:4",
		"server.preview_max": "wpg.toml:7", "server.job_history": "default",
	} {
		if c.Sources[key] != want {
			t.Errorf("source of %s = %q, want %q", key, c.Sources[key], want)
		}
	}
	if err := c.Set("tx.ring_bytes", 4<<20, "--ring-bytes"); err != nil || c.TX.RingBytes != 4<<20 || c.Sources["tx.ring_bytes"] != "--ring-bytes" {
		t.Fatalf("flag override: %v %d %s", err, c.TX.RingBytes, c.Sources["tx.ring_bytes"])
	}
}

func TestParseErrorsCarryLocation(t *testing.T) {
	cases := []struct{ doc, want string }{
		{"[tx]\nring_byte = 5\n", "wpg.toml:2:1: unknown key \"tx.ring_byte\""},
		{"[tx]\nring_bytes = \"lots\"\n", "wpg.toml:2:14: tx.ring_bytes: \"lots\" is not a size"},
		{"[server]\npreview_max = 0\n", "wpg.toml:2:15: server.preview_max = 0 is below the minimum 1"},
		{"[server]\njob_history = \"ten\"\n", "wpg.toml:2:15: server.job_history: \"ten\" is a string"},
		{"[tx\nring_bytes = 1\n", "wpg.toml:1:"},
		{"[tx]\nprerender_max_packets = 1.5\n", "is not a whole number"},
		// a value of the wrong type says what it is, what the key wants, and an example (issue #17 item 32)
		{"[tx]\nring_bytes = true\n", `wpg.toml:2:14: tx.ring_bytes: true is a boolean: want a byte size: a whole number of bytes or a quoted size with a unit, e.g. ring_bytes = 16777216 or ring_bytes = "16MiB"`},
		{"tx.ring_bytes = false\n", `wpg.toml:1:17: tx.ring_bytes: false is a boolean: want a byte size`},
		{"[tx]\nring_bytes = [1]\n", "wpg.toml:2:14: tx.ring_bytes: the value is an array: want a byte size"},
		{"[tx]\nring_bytes = {a = 1}\n", "wpg.toml:2:14: tx.ring_bytes: the value is a table: want a byte size"},
		{"[tx]\nring_bytes = 1979-05-27\n", "wpg.toml:2:14: tx.ring_bytes: 1979-05-27 is a date or time: want a byte size"},
		{"[server]\npreview_max = true\n", "wpg.toml:2:15: server.preview_max: true is a boolean: want a whole number, e.g. preview_max = 256"},
		{"[tx]\nring_bytes = 99999999999999999999\n", "wpg.toml:2:14: tx.ring_bytes: toml: decimal number is too large to fit in a 64-bit signed integer: the largest number a key takes is 9223372036854775807"},
		{"[profile.x]\nsend.workers = 99999999999999999999\n", "wpg.toml:2:16: profile.x.send.workers: toml: decimal number is too large"},
		{"[tx]\nring_bytes = \"99999999999999999999\"\n", "wpg.toml:2:14: tx.ring_bytes: size \"99999999999999999999\" is too large: the largest is 9223372036854775807 bytes"},
		// A section or key given twice says so and how to fix it, not
		// "fix the TOML syntax (key = value, [section])".
		{"[send]\nrate = \"1mpps\"\n[send]\nworkers = 2\n", "wpg.toml:3:2: toml: table send already exists: TOML takes each [section] and each key once: put the keys of both under the first, and delete the repeated line"},
		{"[send]\nrate = \"1mpps\"\nrate = \"2mpps\"\n", "wpg.toml:3:1: toml: key rate is already defined: TOML takes each [section] and each key once"},
		{"[profile.x]\nsend.rate = \"1mpps\"\n[profile.x.send]\nworkers = 2\n", "wpg.toml:3:2: toml: table send already exists as defined by a dotted key: TOML takes each [section] and each key once"},
	}
	for _, tc := range cases {
		err := Default().Parse("wpg.toml", []byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want it to contain %q", tc.doc, err, tc.want)
		}
	}
}

func TestFindPrecedence(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	env := Env{XDGConfigHome: filepath.Join(dir, "xdg"), Home: filepath.Join(dir, "home")}
	if p, err := Find("", env); err != nil || p != "" {
		t.Fatalf("no file: got %q %v", p, err)
	}
	home := filepath.Join(dir, "home", ".config", "wpg", "wpg.toml")
	os.MkdirAll(filepath.Dir(home), 0o755)
	os.WriteFile(home, nil, 0o644)
	if p, _ := Find("", Env{Home: env.Home}); p != home {
		t.Fatalf("~/.config without $XDG_CONFIG_HOME: got %q", p)
	}
	xdg := filepath.Join(dir, "xdg", "wpg", "wpg.toml")
	os.MkdirAll(filepath.Dir(xdg), 0o755)
	os.WriteFile(xdg, nil, 0o644)
	if p, _ := Find("", env); p != xdg {
		t.Fatalf("xdg: got %q", p)
	}
	os.WriteFile("wpg.toml", nil, 0o644)
	if p, _ := Find("", env); p != "wpg.toml" {
		t.Fatalf("./wpg.toml: got %q", p)
	}
	envFile := filepath.Join(dir, "env.toml")
	os.WriteFile(envFile, nil, 0o644)
	env.WPGConfig = envFile
	if p, _ := Find("", env); p != envFile {
		t.Fatalf("$WPG_CONFIG: got %q", p)
	}
	if p, _ := Find(xdg, env); p != xdg {
		t.Fatalf("--config: got %q", p)
	}
	if _, err := Find(filepath.Join(dir, "missing.toml"), env); err == nil {
		t.Fatal("a missing --config file must be an error")
	}
}

func ExampleDefault() {
	c := Default()
	for _, k := range Keys {
		fmt.Printf("%s %q %s\n", k.Name, c.Value(k), c.Sources[k.Name])
	}
	// Output:
	// tx.prerender_max_bytes "256 MiB" default
	// tx.prerender_max_packets "100000000" default
	// tx.ring_bytes "16 MiB" default
	// server.preview_max "256" default
	// server.job_history "100" default
	// server.job_history_db "1000" default
	// server.listen "127.0.0.1:8080" default
	// server.db "" default
	// server.token_file "" default
	// server.job_files "" default
	// server.max_jobs "32" default
	// server.max_parses "2" default
	// dpdk.eal_args "" default
	// port.src_ip "" default
	// port.gateway "" default
	// port.rx_src_ip "" default
	// port.rx_gateway "" default
	// send.interface "" default
	// send.backend "" default
	// send.rate "" default
	// send.workers "1" default
	// send.pin_cores "" default
	// recv.interface "" default
}

func TestTextKeys(t *testing.T) {
	c := Default()
	if err := c.Parse("/etc/wpg/wpg.toml", []byte("[server]\nlisten = \"0.0.0.0:9000\"\ndb = \"jobs.db\"\ntoken_file = \"/run/token\"\n")); err != nil {
		t.Fatal(err)
	}
	if c.Server.Listen != "0.0.0.0:9000" || c.Server.DB != "/etc/wpg/jobs.db" || c.Server.TokenFile != "/run/token" {
		t.Errorf("got %+v", c.Server)
	}
	if c.Sources["server.db"] != "/etc/wpg/wpg.toml:3" {
		t.Errorf("source %q", c.Sources["server.db"])
	}
	err := Default().Parse("wpg.toml", []byte("[server]\nlisten = 8080\n"))
	if err == nil || !strings.Contains(err.Error(), "wpg.toml:2:10: server.listen: 8080 is not a string: want a quoted string") {
		t.Errorf("got %v", err)
	}
}
