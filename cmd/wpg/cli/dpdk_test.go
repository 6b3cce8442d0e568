package cli

import (
	"testing"

	"github.com/wpg-dev/wpg/cmd/wpg/cli/config"
)

// TestDPDKArgs: --dpdk-args wins over dpdk.eal_args, and the key goes
// only into runs of the dpdk backend.
func TestDPDKArgs(t *testing.T) {
	cfg := config.Default()
	if err := cfg.Parse("wpg.toml", []byte("[dpdk]\neal_args = \"--no-huge -m 512 --vdev net_null0\"\n")); err != nil {
		t.Fatal(err)
	}
	if cfg.Sources["dpdk.eal_args"] != "wpg.toml:2" {
		t.Errorf("source %q", cfg.Sources["dpdk.eal_args"])
	}
	for _, c := range []struct {
		given   bool
		flag    string
		backend string
		want    string
	}{
		{false, "", "dpdk", "--no-huge -m 512 --vdev net_null0"},
		{true, "--no-huge --vdev net_null1", "dpdk", "--no-huge --vdev net_null1"},
		{false, "", "afpacket", ""},
		{true, "--vdev net_null0", "afpacket", "--vdev net_null0"}, // refused later by the applies-only-to rule
	} {
		if got := dpdkArgs(c.given, c.flag, c.backend, cfg); got != c.want {
			t.Errorf("dpdkArgs(%v, %q, %s) = %q, want %q", c.given, c.flag, c.backend, got, c.want)
		}
	}
	if err := config.Default().Parse("wpg.toml", []byte("[dpdk]\neal_args = 5\n")); err == nil {
		t.Error("a number for dpdk.eal_args must be refused")
	}
}
