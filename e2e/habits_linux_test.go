//go:build linux

package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// TestSendAsLabConfigured (issue #28): `wpg send TEMPLATE` with nothing but
// a wpg.toml naming the interface, the backend and the rate sends as
// configured: on the veth, through afpacket, at the rate, every frame
// arriving at a `wpg recv` that takes its interface from a wpg.toml's
// recv.interface; a profile and a flag each go over the file's keys, and
// `wpg config` says where each value came from.
func TestSendAsLabConfigured(t *testing.T) {
	v := testbed.NewVeth(t)
	dir := t.TempDir()
	write := func(name, body string) string { return writeIn(t, dir, name, body) }
	write("wpg.toml", "[send]\ninterface = \""+v.Outer+"\"\nbackend = \"afpacket\"\nrate = \"1kpps\"\n\n[profile.fast]\nsend.rate = \"100mbit\"\n")
	tpl := write("t.wpg.yaml", "streams:\n  - count: 20\n    ipv4: {src: 198.18.0.1, dst: 198.19.0.1}\n    udp: {src: 1000, dst: 2000}\n")
	rcfg := write("recv.toml", "[recv]\ninterface = \""+v.Inner+"\"\n")

	r := startRecvWith(t, v, testbed.Wpg(t), "wpg recv", []string{"recv", "--config", rcfg, "--json", "--expect", "20", "--idle-timeout", "10s"})
	out, errs, code := run(t, dir, "send", "t.wpg.yaml")
	if code != 0 {
		t.Fatalf("wpg send %s with wpg.toml: exit %d: %s", tpl, code, errs)
	}
	for _, want := range []string{"afpacket on " + v.Outer, "frames               20 ", "target               1kpps"} {
		if !strings.Contains(out, want) {
			t.Errorf("wpg send with wpg.toml: the report lacks %q:\n%s", want, out)
		}
	}
	if res, code := r.wait(t); code != 0 || res.Frames != 20 || res.Lost != 0 {
		t.Errorf("wpg recv (recv.interface from its file): exit %d, %d frames, %d lost; want the 20 sent", code, res.Frames, res.Lost)
	}

	// The profile's rate over the file's; a flag over both.
	for args, want := range map[string]string{"--profile fast": "target               100Mbps", "--profile fast --rate 2kpps": "target               2kpps"} {
		out, errs, code := run(t, dir, append([]string{"send", "t.wpg.yaml"}, strings.Fields(args)...)...)
		if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "afpacket on "+v.Outer) {
			t.Errorf("wpg send %s: exit %d, %s\n%s; want %q", args, code, errs, out, want)
		}
	}
	out, errs, code = run(t, dir, "config", "--profile", "fast", "--json")
	var cfg struct {
		Profile string
		Keys    []struct{ Key, Source string }
	}
	if code != 0 || json.Unmarshal([]byte(out), &cfg) != nil || cfg.Profile != "fast" {
		t.Fatalf("wpg config --profile fast --json: exit %d, %s %s", code, out, errs)
	}
	sources := map[string]string{}
	for _, k := range cfg.Keys {
		sources[k.Key] = k.Source
	}
	for key, want := range map[string]string{"send.rate": "profile fast, wpg.toml:7", "send.interface": "wpg.toml:2", "send.workers": "default"} {
		if sources[key] != want {
			t.Errorf("wpg config --profile fast: %s from %q, want %q", key, sources[key], want)
		}
	}
	if _, errs, code := run(t, dir, "send", "t.wpg.yaml", "--profile", "slow"); code != 2 || !strings.Contains(errs, "no such profile; the profiles are fast") {
		t.Errorf("--profile slow: exit %d, %s; want exit 2 listing the profiles", code, errs)
	}
}
