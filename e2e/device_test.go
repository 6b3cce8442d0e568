package e2e

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/wpg-dev/wpg/internal/netns"
	"github.com/wpg-dev/wpg/internal/testbed"
)

// newRouter is the test bed's router (internal/netns.NewRouter), removed
// when the test ends.
func newRouter(t *testing.T, o netns.RouterOptions) *netns.Router {
	t.Helper()
	testbed.RequireRoot(t)
	testbed.RequireTool(t, "ip", "iproute2")
	if o.Shape != nil {
		testbed.RequireTool(t, "tc", "iproute2")
	}
	r, err := netns.NewRouter(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("removing the router: %v", err)
		}
	})
	return r
}

// pairReport is what the device tests read of a send report.
type pairReport struct {
	Frames       uint64           `json:"frames"`
	Error        string           `json:"error"`
	Notes        []string         `json:"notes"`
	Verification pairVerification `json:"verification"`
	Ports        []struct {
		Role       string `json:"role"`
		Interface  string `json:"interface"`
		GatewayMAC string `json:"gateway_mac"`
		Answered   uint64 `json:"answered"`
	} `json:"ports"`
	Directions []struct {
		Direction    string           `json:"direction"`
		From         string           `json:"from"`
		To           string           `json:"to"`
		Frames       uint64           `json:"frames"`
		PPS          float64          `json:"pps"`
		Verdict      string           `json:"verdict"`
		Verification pairVerification `json:"verification"`
	} `json:"directions"`
}

type pairVerification struct {
	Frames      uint64 `json:"frames"`
	Lost        uint64 `json:"lost"`
	Duplicated  uint64 `json:"duplicated"`
	Reordered   uint64 `json:"reordered"`
	Corrupted   uint64 `json:"corrupted"`
	Unsigned    uint64 `json:"unsigned"`
	WrongStream uint64 `json:"wrong_stream"`
	JitterNs    int64  `json:"jitter_ns"`
	Latency     *struct {
		P50 int64 `json:"p50_ns"`
		P99 int64 `json:"p99_ns"`
	} `json:"latency"`
	Streams []struct {
		Stream   int    `json:"stream"`
		Frames   uint64 `json:"frames"`
		JitterNs int64  `json:"jitter_ns"`
	} `json:"streams"`
}

func decodePair(t *testing.T, out string) pairReport {
	t.Helper()
	var rep pairReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return rep
}

// Issue #26: through the router namespace, with no MAC given anywhere,
// one command sends 100,000 frames at 50 kpps on port A and receives them
// on port B: all received, none lost, with latency and jitter; over IPv4
// (ARP) and IPv6 (Neighbor Discovery).
func TestDeviceThroughRouter(t *testing.T) {
	r := newRouter(t, netns.RouterOptions{})
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
	}{
		{"ipv4", []string{"--src-ip", r.A.Addr4.String(), "--gateway", r.A.Gateway4.String(), "--rx-src-ip", r.B.Addr4.String()}},
		{"ipv6", []string{repoFile(t, "examples/router6.wpg.yaml"), "--src-ip", r.A.Addr6.String(), "--gateway", r.A.Gateway6.String(), "--rx-src-ip", r.B.Addr6.String()}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"send"}, c.args...)
			args = append(args, "--netns", r.Ports, "-i", r.A.Port, "--rx-netns", r.Ports, "--rx-interface", r.B.Port,
				"--count", "100000", "--rate", "50kpps", "--json")
			out, stderr, code := run(t, dir, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s\n%s", code, stderr, out)
			}
			rep := decodePair(t, out)
			v := rep.Verification
			if rep.Frames != 100000 || v.Frames != 100000 || v.Lost != 0 || v.Duplicated != 0 || v.Corrupted != 0 || v.WrongStream != 0 {
				t.Fatalf("sent %d, received %+v; want 100000 received, 0 lost", rep.Frames, v)
			}
			if v.Latency == nil || v.Latency.P50 <= 0 || v.Latency.P99 < v.Latency.P50 || v.JitterNs <= 0 {
				t.Fatalf("latency %+v, jitter %d: want p50, p99 and J measured", v.Latency, v.JitterNs)
			}
			if len(rep.Ports) != 2 || rep.Ports[0].GatewayMAC == "" || rep.Ports[1].Answered == 0 || len(rep.Directions) != 1 || rep.Directions[0].Verdict != "pass" {
				t.Fatalf("ports %+v, directions %+v", rep.Ports, rep.Directions)
			}
			t.Logf("%s: %d received, %d lost, latency p50 %d ns p99 %d ns, jitter %d ns; gateway %s, port B answered %d", c.name, v.Frames, v.Lost, v.Latency.P50, v.Latency.P99, v.JitterNs, rep.Ports[0].GatewayMAC, rep.Ports[1].Answered)
		})
	}
}
