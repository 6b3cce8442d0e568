package config

import (
	"strings"
	"testing"
)

const labToml = `[send]
interface = "eth1"
backend = "afpacket"
rate = "1mpps"

[recv]
interface = "eth2"

[profile.lab]
send.rate = "10gbps"
send.workers = 4

[profile.slow.send]
rate = "100mbit"
pin_cores = "2,3"

[profile]
dotted.send.interface = "eth9"
`

// TestProfiles: [profile.NAME] tables, however written, override the
// file's keys when chosen, each value's source says so, and the keys
// outside every profile keep theirs.
func TestProfiles(t *testing.T) {
	c := Default()
	if err := c.ParseProfile("wpg.toml", []byte(labToml), ""); err != nil {
		t.Fatal(err)
	}
	if c.Send.Interface != "eth1" || c.Send.Backend != "afpacket" || c.Send.Rate != "1mpps" || c.Recv.Interface != "eth2" || c.Send.Workers != 1 {
		t.Errorf("no profile: %+v %+v", c.Send, c.Recv)
	}
	if c.Sources["send.rate"] != "wpg.toml:4" || c.Profile != "" || strings.Join(c.Profiles, ",") != "dotted,lab,slow" {
		t.Errorf("no profile: source %q, profile %q of %v", c.Sources["send.rate"], c.Profile, c.Profiles)
	}
	for _, tc := range []struct {
		profile string
		check   func(*Config) bool
		sources map[string]string
	}{
		{"lab", func(c *Config) bool {
			return c.Send.Rate == "10gbps" && c.Send.Workers == 4 && c.Send.Interface == "eth1"
		},
			map[string]string{"send.rate": "profile lab, wpg.toml:10", "send.workers": "profile lab, wpg.toml:11", "send.interface": "wpg.toml:2", "tx.ring_bytes": "default"}},
		{"slow", func(c *Config) bool {
			return c.Send.Rate == "100mbit" && c.Send.PinCores == "2,3" && c.Send.Workers == 1
		},
			map[string]string{"send.rate": "profile slow, wpg.toml:14", "send.pin_cores": "profile slow, wpg.toml:15", "send.workers": "default"}},
		{"dotted", func(c *Config) bool { return c.Send.Interface == "eth9" && c.Send.Rate == "1mpps" },
			map[string]string{"send.interface": "profile dotted, wpg.toml:18"}},
	} {
		c := Default()
		if err := c.ParseProfile("wpg.toml", []byte(labToml), tc.profile); err != nil {
			t.Fatal(err)
		}
		if !tc.check(c) || c.Profile != tc.profile {
			t.Errorf("profile %s: %+v (profile %q)", tc.profile, c.Send, c.Profile)
		}
		for k, want := range tc.sources {
			if c.Sources[k] != want {
				t.Errorf("profile %s: source of %s %q, want %q", tc.profile, k, c.Sources[k], want)
			}
		}
	}
}

// TestProfileErrors: an unknown profile lists the profiles; a mistake in
// any profile, chosen or not, is an error at its place.
func TestProfileErrors(t *testing.T) {
	for _, tc := range []struct{ doc, profile, want string }{
		{labToml, "labb", "wpg.toml: --profile labb: no such profile; the profiles are dotted, lab, slow: did you mean lab?"},
		{"[send]\nrate = \"1Mpps\"\n", "lab", "the file defines no profiles: add a [profile.lab] table"},
		{"[profile.a.send]\nrate = \"10MBps\"\n", "", "wpg.toml:2:8: profile.a.send.rate: bad rate \"10MBps\": bytes per second are not accepted"},
		{"[profile.a]\nsend.workers = 0\n", "", "wpg.toml:2:16: profile.a.send.workers = 0 is below the minimum 1"},
		{"[profile.a]\nsend.rat = \"1Mpps\"\n", "a", `wpg.toml:2:1: in [profile.a]: unknown key "send.rat": did you mean send.rate?`},
		{"[profile.a.txx]\n", "a", "in [profile.a]: unknown section [txx]: the sections are [tx], [server], [dpdk], [port], [send], [recv]: did you mean [tx]?"},
		{"[profile.a.Send]\nrate = \"1Mpps\"\n", "a", "section [profile.a.Send]: wpg.toml's names are lower case (TOML's are case-sensitive): write [profile.a.send]"},
		{"profile = 5\n", "", "wpg.toml:1:11: profile: 5 is a whole number, and profile holds tables, one per profile: write [profile.NAME]"},
		{"[profile]\na = \"x\"\n", "", `wpg.toml:2:5: profile.a: "x" is a string, and a profile is a table`},
		{"[profile.a]\nsend = 1\n", "", "wpg.toml:2:8: profile.a.send: 1 is a whole number, and profile.a.send is a section (a table): write [profile.a.send]"},
		{"[send]\nbackend = \"afpackt\"\n", "", `wpg.toml:2:11: send.backend: "afpackt" is not a backend: give one of afpacket, afxdp,`},
		{"[send]\npin_cores = \"two\"\n", "", `wpg.toml:2:13: send.pin_cores: "two" is not a CPU list`},
		{"[send]\nrate = \"1000\"\n", "", `wpg.toml:2:8: send.rate: bad rate "1000": missing unit`},
		// A port's address is checked when the file is read, in a
		// profile not chosen too (it was read only by the run that used it).
		{"[profile.a]\nport.src_ip = \"1.2.3\"\n", "", `wpg.toml:2:15: profile.a.port.src_ip: "1.2.3" is not an address with a prefix length; give the port's address and the link's prefix, e.g. 198.18.0.1/24`},
		{"[port]\nrx_src_ip = \"198.19.0.1\"\n", "", `wpg.toml:2:13: port.rx_src_ip: "198.19.0.1" has no prefix length`},
		{"[port]\ngateway = \"nope\"\n", "", `wpg.toml:2:11: port.gateway: "nope" is not an IP address; give the device's address on the port's link, e.g. 198.18.0.254`},
		{"[profile.b.port]\nrx_gateway = \"198.19.0.x\"\n", "", `wpg.toml:2:14: profile.b.port.rx_gateway: "198.19.0.x" is not an IP address`},
	} {
		err := Default().ParseProfile("wpg.toml", []byte(tc.doc), tc.profile)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q --profile %q: got %v, want it to contain %q", tc.doc, tc.profile, err, tc.want)
		}
	}
	if _, err := LoadProfile("", "lab", Env{Home: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "--profile lab: no configuration file was found") {
		t.Errorf("--profile without a file: %v", err)
	}
}

// TestEveryKeyDecodes: each key of Keys has its field in rawSections, so
// that a key added to one and not the other cannot be set from a file.
func TestEveryKeyDecodes(t *testing.T) {
	var doc strings.Builder
	for _, k := range Keys {
		v := `""`
		if !k.Text {
			v = "1048576"
		}
		doc.WriteString(k.Name + " = " + v + "\n")
	}
	c := Default()
	if err := c.Parse("wpg.toml", []byte(doc.String())); err != nil {
		t.Fatal(err)
	}
	for _, k := range Keys {
		if !strings.HasPrefix(c.Sources[k.Name], "wpg.toml:") {
			t.Errorf("%s: source %q: the file's value was not taken", k.Name, c.Sources[k.Name])
		}
	}
}
