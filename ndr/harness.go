package ndr

import (
	"context"
	"errors"
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
// counting what arrives. Run builds one for every search; a test other
// than the throughput search (latency, back-to-back frames) is built on
// Trial, which returns everything both ends measured.
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
// received, and the rate the sender achieved.
func (m Measurement) Outcome() Outcome {
	return Outcome{Sent: m.Sender.Frames, Received: m.Receiver.Frames, AchievedPPS: m.Sender.PPS}
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
// duration (Trial), a count of frames sent back to back, … The receiver
// starts before the sender and ends 300 ms after the last frame it gets,
// or 2 s after the sender ended when it gets none. An error names the end
// that failed; ctx's ends the trial with ctx.Err().
func (h Harness) Measure(ctx context.Context, frame int, tune func(*job.Spec)) (Measurement, error) {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rspec := job.RecvSpec{Backend: "afpacket", Interface: h.Receiver, IdleTimeout: 300 * time.Millisecond}
	var rec *job.Reception
	open := func() (err error) { rec, err = job.Receive(rctx, rspec, job.Env{}); return err }
	var err error
	if h.ns != nil {
		err = h.ns.Do(open)
	} else {
		err = open()
	}
	if err != nil {
		return Measurement{}, fmt.Errorf("receiver on %s: %w", h.Receiver, err)
	}
	type got struct {
		res recv.Result
		err error
	}
	done := make(chan got, 1)
	go func() {
		res, err := rec.Wait(nil, 0)
		done <- got{res, err}
	}()
	spec := job.NewSpec()
	spec.Command = "ndr"
	spec.Backend, spec.Interface, spec.QdiscBypass = h.Backend, h.Sender, h.QdiscBypass
	if spec.Backend == "" {
		spec.Backend = "afpacket"
	}
	spec.TemplateText = Template(frame)
	tune(&spec)
	run, err := job.Start(ctx, spec, job.Env{})
	if err != nil {
		cancel()
		<-done
		return Measurement{}, fmt.Errorf("sender on %s: %w", h.Sender, err)
	}
	srep := run.Report()
	if srep == nil {
		cancel()
		<-done
		return Measurement{}, fmt.Errorf("sender on %s: %w", h.Sender, run.Err())
	}
	if srep.Error != "" {
		cancel()
		<-done
		return Measurement{}, fmt.Errorf("sender on %s: %s", h.Sender, srep.Error)
	}
	// The receiver ends 300 ms after the last frame; one that got none
	// ends when the grace below runs out.
	grace := time.NewTimer(2 * time.Second)
	defer grace.Stop()
	var g got
	select {
	case g = <-done:
	case <-grace.C:
		cancel()
		g = <-done
	}
	if g.err != nil && !errors.Is(g.err, context.Canceled) && ctx.Err() == nil {
		return Measurement{}, fmt.Errorf("receiver on %s: %w", h.Receiver, g.err)
	}
	if err := ctx.Err(); err != nil {
		return Measurement{}, err
	}
	return Measurement{Sender: srep, Receiver: g.res}, nil
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
