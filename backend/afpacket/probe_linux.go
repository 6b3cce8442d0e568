//go:build linux

package afpacket

import (
	"github.com/wpg-dev/wpg/backend/afpacket/internal/tpacket"
	"github.com/wpg-dev/wpg/sysinfo"
)

func init() {
	for _, p := range []struct {
		name, min string
		f         tpacket.Feature
	}{
		{"afpacket: TPACKET_V3 TX ring", "4.11", tpacket.FeatureTxRingV3},
		{"afpacket: PACKET_QDISC_BYPASS", "3.14", tpacket.FeatureQdiscBypass},
		{"afpacket: PACKET_IGNORE_OUTGOING (receiver)", "4.20", tpacket.FeatureIgnoreOutgoing},
		{"afpacket: PACKET_VNET_HDR (linear TX on virtual devices)", "4.11", tpacket.FeatureVnetHdr}, // with the TX ring (tpacket_snd vnet support)
	} {
		f := p.f
		sysinfo.RegisterProbe(sysinfo.Probe{Name: p.name, MinKernel: p.min, Run: func() (sysinfo.Status, string) {
			return sysinfo.ProbeResult(tpacket.Probe(f), "needs CAP_NET_RAW to open a packet socket")
		}})
	}
}
