package ndr

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/wpg-dev/wpg/internal/netns"
	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/recv"
	"github.com/wpg-dev/wpg/report"
)

// Harness runs trials on a path: wpg's sender (package job) on one
// interface at a given rate, and wpg's AF_PACKET receiver on another
// counting what arrives, in one port-pair run (job.Spec.RxInterface: the
// same process and clock, so the latency is measured too). Run builds one
// for every search; the latency and back-to-back tests are built on
// Measure, which returns everything both ends measured.
//
// The backends it uses must be registered: import
// github.com/wpg-dev/wpg/backend/afpacket (the receiver, and the default
// sender), and backend/afxdp for Backend "afxdp".
type Harness struct {
	// Backend is the sender's path: "afpacket" ("" too) or "afxdp".
	Backend string
	// QdiscBypass sends with PACKET_QDISC_BYPASS (afpacket).
	QdiscBypass bool
	// Sender and Receiver are the interfaces the frames leave by and
	// arrive on.
	Sender, Receiver string
	// SenderNetns and ReceiverNetns are their network namespaces (a name
	// of ip netns or a path; "": the caller's).
	SenderNetns, ReceiverNetns string
	// SrcIP, Gateway, RxSrcIP and RxGateway give the two ports addresses
	// and next hops instead of MACs, as job.Spec's fields of those names:
	// a device under test between them is sent to through its gateway.
	SrcIP, Gateway, RxSrcIP, RxGateway string
	// Bidir sends from both ports at once (job.Spec.Bidir): a trial
	// passes only when both directions do, and its rate is each
	// direction's.
	Bidir bool

	// ns is the network namespace the receiver runs in (the inner end of
	// Run's veth pair); nil: the caller's.
	ns *netns.NS
}

// Measurement is what one trial measured, in full.
type Measurement struct {
	// Sender is the sender's report: frames sent, the rate achieved,
	// lateness.
	Sender *report.Report
	// Receiver is the receiver's result: frames counted (distinct and
	// intact), loss, duplicates, reordering, corruption, latency.
	Receiver recv.Result
}

// Outcome is the measurement as a search judges it: frames sent and
// received, the rate the sender achieved (with both directions, the
// slower one's), and the latency and jitter the receiver measured.
func (m Measurement) Outcome() Outcome {
	o := Outcome{Sent: m.Sender.Frames, Received: m.Receiver.Frames, AchievedPPS: m.Sender.PPS, JitterNs: m.Receiver.JitterNs}
	if d := m.Sender.Directions; len(d) > 1 {
		o.AchievedPPS = min(d[0].PPS, d[1].PPS)
	}
	if l := m.Receiver.Latency; l != nil {
		o.LatencyP50Ns, o.LatencyP99Ns = l.P50Ns, l.P99Ns
	}
	return o
}

// TrialFunc is the search's trial at one frame size: Trial's outcome.
func (h Harness) TrialFunc(frame int) TrialFunc {
	return func(ctx context.Context, rate float64, d time.Duration) (Outcome, error) {
		m, err := h.Trial(ctx, frame, rate, d)
		if err != nil {
			return Outcome{}, err
		}
		return m.Outcome(), nil
	}
}

// Trial sends frames of frame bytes (the FCS left out) at rate frames/s
// for d and returns what the sender sent and the receiver counted: Measure
// with that rate and duration.
func (h Harness) Trial(ctx context.Context, frame int, rate float64, d time.Duration) (Measurement, error) {
	return h.Measure(ctx, frame, func(spec *job.Spec) {
		spec.Rate = strconv.FormatFloat(rate, 'f', 3, 64) + "pps"
		spec.Duration = d
	})
}

// Measure runs one trial of frames of frame bytes (the FCS left out; see
// Template for the frames), the sender's spec set by tune: a rate and a
// duration (Trial), a count of frames sent back to back, … It is one
// port-pair run: the receiver starts before the sender and ends when
// every frame sent arrived, or 300 ms after the last one it got (docs/
// device.md). An error names the end that failed; ctx's ends the trial
// with ctx.Err().
func (h Harness) Measure(ctx context.Context, frame int, tune func(*job.Spec)) (Measurement, error) {
	spec := job.NewSpec()
	spec.Command = "ndr"
	spec.Backend, spec.Interface, spec.QdiscBypass = h.Backend, h.Sender, h.QdiscBypass
	if spec.Backend == "" {
		spec.Backend = "afpacket"
	}
	spec.RxInterface, spec.Netns, spec.RxNetns = h.Receiver, h.SenderNetns, h.ReceiverNetns
	if h.ns != nil {
		spec.RxNetns = h.ns.Path()
	}
	spec.SrcIP, spec.Gateway, spec.RxSrcIP, spec.RxGateway, spec.Bidir = h.SrcIP, h.Gateway, h.RxSrcIP, h.RxGateway, h.Bidir
	spec.TemplateText = Template(frame)
	tune(&spec)
	run, err := job.Start(ctx, spec, job.Env{})
	if err != nil {
		return Measurement{}, fmt.Errorf("sender on %s: %w", h.Sender, err)
	}
	srep := run.Report()
	if srep == nil {
		return Measurement{}, fmt.Errorf("sender on %s: %w", h.Sender, run.Err())
	}
	if err := ctx.Err(); err != nil {
		return Measurement{}, err
	}
	if srep.Error != "" {
		return Measurement{}, fmt.Errorf("sender on %s: %s", h.Sender, srep.Error)
	}
	var res recv.Result
	if err := json.Unmarshal(srep.Verification, &res); err != nil {
		return Measurement{}, fmt.Errorf("receiver on %s: its result: %w", h.Receiver, err)
	}
	return Measurement{Sender: srep, Receiver: res}, nil
}

// Template is the template text of a trial's frames of frame bytes (FCS
// left out): one UDP/IPv4 stream from 198.18.0.1 to 198.19.0.1 with wpg's
// signature, its source port walking 1024…65535, to a destination MAC the
// receiving end does not own (its stack drops the frames early; AF_PACKET
// still sees them). A frame too short for UDP and the 20-byte signature
// (RFC 2544's 64 bytes: 60 without the FCS) is IPv4 with protocol 253
// (experimental) instead.
func Template(frame int) string {
	l4 := `    udp:
      src: {from: 1024, to: 65535}
      dst: 9
`
	if frame < minUDPFrame {
		l4 = ""
	}
	return fmt.Sprintf(`streams:
  - name: ndr%d
    size: %d
    ethernet: {src: "02:00:00:00:00:01", dst: "02:00:00:00:00:99"}
    ipv4: {src: 198.18.0.1, dst: 198.19.0.1, ttl: 64}
%s`, frame, frame, l4)
}

// minUDPFrame is the shortest UDP/IPv4 frame with the signature: 42 bytes
// of headers and 20 of signature.
const minUDPFrame = 62
