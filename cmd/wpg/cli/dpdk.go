package cli

import "github.com/wpg-dev/wpg/cmd/wpg/cli/config"

// dpdkArgs is the EAL arguments of a run: --dpdk-args when the user gave
// it (given), else dpdk.eal_args of wpg.toml when the run uses the dpdk
// backend. The key goes into no other backend's run, so that a wpg.toml
// written for dpdk does not trip the applies-only-to rule elsewhere.
func dpdkArgs(given bool, flag, backendName string, cfg *config.Config) string {
	if given {
		return flag
	}
	if backendName == "dpdk" {
		return cfg.DPDK.EALArgs
	}
	return ""
}
