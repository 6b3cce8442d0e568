package job

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/peer"
	"github.com/wpg-dev/wpg/recv"
	"github.com/wpg-dev/wpg/report"
)

// Reception is an opened receiving side (Receive).
type Reception struct {
	ctx    context.Context
	kind   backend.Kind
	spec   RecvSpec
	inst   backend.Instance
	rx     backend.Receiver
	decode recv.Decoder
	summed bool          // --verify on: a receiver that sums payloads as it copies them may (recv.PayloadSummer)
	ctl    *peer.Control // the peer protocol's control connection; nil without --listen
	// streams are the streams expected (a port pair's receiver; nil: any).
	streams *recv.StreamSet
	// start is when Receive began: Duration counts from it, the wait for
	// a sender included.
	start time.Time
	// noSender is set when no sender came on Listen within Duration: rx
	// and inst are nil, and Wait returns an empty result at once.
	noSender bool
}

// prepareRecv validates s and returns the backend, its options and the
// decoder, or every problem at once.
func prepareRecv(s RecvSpec, env Env) (backend.Registration, backend.Options, recv.Decoder, error) {
	var p problems
	name := s.Backend
	if name == "" {
		if s.Interface == "" {
			p.add("backend", "", "is needed: say what to receive from", fmt.Sprintf("give {interface} IFACE (network) or {backend} NAME (%s)", joinNames(backend.Names())))
			return backend.Registration{}, backend.Options{}, nil, p.err()
		}
		name = "afpacket"
	}
	reg, err := backend.Lookup(name)
	if err != nil {
		p.wrap("backend", name, err, "choose one of "+strings.Join(backend.Names(), ", "))
		return reg, backend.Options{}, nil, p.err()
	}
	if !reg.Receives {
		p.add("backend", reg.Name, "has no receiving side", "choose one of the backends wpg sysinfo lists as receiving")
		return reg, backend.Options{}, nil, p.err()
	}
	checkBackendFields(&p, reg, func(f string) bool { return given(s, f) })
	if s.Verify != "" && !reg.Payload {
		p.add("verify", "", fmt.Sprintf("checks payload frames (backends %s), not the packets of %s", joinNames(backendsWhere(true)), reg.Name), "drop {verify} (packets carry their own checksums)")
	}
	if s.Slots < 0 || s.Slots > MaxSlots {
		p.add("slots", strconv.Itoa(s.Slots), fmt.Sprintf("is outside 0 to %d ring slots", MaxSlots), fmt.Sprintf("give 1 to %d, or 0 for the sender's", MaxSlots))
	}
	if reg.Kind == backend.KindNetwork && s.Interface == "" {
		p.add("interface", "", fmt.Sprintf("is needed: backend %s receives on a network interface", reg.Name), interfaceFix(reg.Name, "add {interface} IFACE"))
	}
	if s.Batch == 0 {
		s.Batch = defaultRecvBatch
	}
	if s.Batch < 1 || s.Batch > 65536 {
		p.add("batch", strconv.Itoa(s.Batch), "is outside 1 to 65536", "give 1 to 65536 frames per batch (e.g. 256)")
	}
	if s.Duration < 0 {
		p.add("duration", s.Duration.String(), "must not be negative", "give 0 for no limit")
	}
	if s.IdleTimeout < 0 {
		p.add("idle_timeout", s.IdleTimeout.String(), "must not be negative", "give 0 for none")
	}
	if s.PipeSize != 0 && (s.PipeSize < 4096 || s.PipeSize > 1<<31) {
		p.add("pipe_size", strconv.FormatInt(s.PipeSize, 10), "is outside 4KiB to 2GiB", "give a size such as 64KiB or 1MiB, or 0 for the system's")
	}
	decode := recv.Decoder(recv.DecodePacket)
	if reg.Payload {
		mode, err := frame.ParseVerify(verifyName(s.Verify))
		if err != nil {
			p.add("verify", s.Verify, "is not a verify mode", "use on, sample or off")
		}
		decode = frame.PayloadDecoder(mode)
	}
	if len(p.list) > 0 {
		return reg, backend.Options{}, nil, p.err()
	}
	o := recvOptions(s, env)
	if reg.Check != nil {
		if err := reg.Check(o); err != nil {
			p.wrap("backend", "", err, "change the setting it names ("+backendDoc(reg)+")")
			return reg, o, nil, p.err()
		}
	}
	return reg, o, decode, nil
}

// ValidateRecv checks spec as Receive would, without opening anything, and
// returns every problem at once as Problems, or nil.
func ValidateRecv(spec RecvSpec, env Env) error {
	_, _, _, err := prepareRecv(spec, env)
	return err
}

// defaultRecvBatch is the receive batch when neither the spec nor the
// sender's request gives one.
const defaultRecvBatch = 64

// Receive validates spec (every problem at once, as Problems) and opens
// the receiving side; Wait then receives. Cancelling ctx ends the
// reception (stop "interrupted").
//
// With Listen (a local path's receiver, `wpg recv --listen SOCK`) it
// first waits for a sender's control connection on the socket and takes
// the sender's request (docs/local-paths.md, "Peer protocol"): what the
// spec leaves unset comes from the request, a value the request
// contradicts is refused (to the sender, and returned) naming both, and
// Wait answers the sender with the result.
func Receive(ctx context.Context, spec RecvSpec, env Env) (*Reception, error) {
	env = env.withDefaults()
	start := time.Now()
	var ctl *peer.Control
	if spec.Listen != "" && spec.Interface == "" {
		if spec.Backend != "" {
			if _, _, _, err := prepareRecv(spec, env); err != nil {
				return nil, err // a receiver that cannot start says so before it waits
			}
		}
		c, err := acceptWithin(ctx, spec)
		if errors.Is(err, errNoSender) {
			return &Reception{ctx: ctx, kind: backend.KindLocal, spec: spec, start: start, noSender: true}, nil
		}
		if err != nil {
			return nil, err
		}
		if spec, err = applyRequest(spec, c.Request); err != nil {
			return nil, c.Refuse(err)
		}
		if reg, err := backend.Lookup(spec.Backend); err == nil && !reg.Reads("listen") {
			spec.Listen = "" // the pipe: the socket carried the control connection only
		}
		ctl = c
	}
	reg, o, decode, err := prepareRecv(spec, env)
	if err != nil {
		if ctl != nil {
			return nil, ctl.Refuse(err)
		}
		return nil, err
	}
	// A receiver whose data comes over the listening socket (shm, cma,
	// unix, …) accepts first: opening it accepts the sender's data
	// connection, and the sender waits for its hello, so the set-up is
	// over before the run starts. The pipe has no such hello: its sender
	// starts the run once accepted, so the receiver is opened first (its
	// buffer sized and written for the largest frame: 2.4 s for 1 GiB on
	// a VM) and accepts only then, or refuses with the reason.
	openFirst := ctl != nil && spec.Listen == ""
	if ctl != nil && !openFirst {
		if err := ctl.Accept(); err != nil {
			return nil, err
		}
		o.Rendezvous = ctl.Listener
	}
	// A FIFO's reader waits in its open for a writer: within Duration.
	octx := ctx
	if spec.FIFO != "" && spec.Duration > 0 && ctl == nil {
		var cancel context.CancelFunc
		octx, cancel = context.WithTimeout(ctx, max(spec.Duration-time.Since(start), time.Nanosecond))
		defer cancel()
	}
	inst, err := reg.Open(octx, o)
	err = backend.Name(reg.Name, err) // "afxdp: …" once, as a sender's
	if err != nil {
		if openFirst {
			return nil, ctl.Refuse(err)
		}
		if ctl != nil {
			ctl.Close()
		}
		return nil, err
	}
	rx, err := inst.NewReceiver()
	err = backend.Name(reg.Name, err)
	if ctl != nil {
		ctl.CloseListener()
	}
	if err != nil {
		inst.Close()
		if ctl == nil && ctx.Err() == nil && errors.Is(octx.Err(), context.DeadlineExceeded) {
			return &Reception{ctx: ctx, kind: reg.Kind, spec: spec, start: start, noSender: true}, nil
		}
		if openFirst {
			return nil, ctl.Refuse(err)
		}
		if ctl != nil {
			ctl.Close()
		}
		return nil, err
	}
	if openFirst {
		if err := ctl.Accept(); err != nil {
			rx.Close()
			inst.Close()
			return nil, err
		}
	}
	if spec.Batch == 0 {
		spec.Batch = defaultRecvBatch
	}
	mode, _ := frame.ParseVerify(verifyName(spec.Verify)) // checked by prepareRecv
	summed := reg.Payload && mode == frame.VerifyOn
	return &Reception{ctx: ctx, kind: reg.Kind, spec: spec, inst: inst, rx: rx, decode: decode, summed: summed, ctl: ctl, start: start}, nil
}

// errNoSender is acceptWithin's answer when Duration ran out first.
var errNoSender = errors.New("no sender within the duration")

// acceptWithin waits for a sender's request on s.Listen, at most
// s.Duration (none: until ctx ends); errNoSender when the duration ran
// out first.
func acceptWithin(ctx context.Context, s RecvSpec) (*peer.Control, error) {
	if s.Duration <= 0 {
		return peer.AcceptRequest(ctx, s.Listen)
	}
	actx, cancel := context.WithTimeout(ctx, s.Duration)
	defer cancel()
	c, err := peer.AcceptRequest(actx, s.Listen)
	if err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
		return nil, errNoSender
	}
	return c, err
}

// Sender reports whether a sender came: false for a receiver on Listen
// or a FIFO whose Duration ran out while it waited for one (Wait then
// returns at once, with nothing received).
func (r *Reception) Sender() bool { return !r.noSender }

// applyRequest fills what s leaves unset from the sender's request q and
// refuses a value q contradicts, naming both.
func applyRequest(s RecvSpec, q peer.RecvRequest) (RecvSpec, error) {
	var bad []string
	conflict := func(what, sender, receiver string) {
		bad = append(bad, fmt.Sprintf("the sender asks for %s %s, this receiver was started with %s %s", what, sender, what, receiver))
	}
	switch {
	case s.Backend == "":
		s.Backend = q.Backend
	case q.Backend != "" && q.Backend != s.Backend:
		conflict("backend", q.Backend, s.Backend)
	}
	switch {
	case s.Verify == "":
		s.Verify = q.Verify
	case verifyName(q.Verify) != verifyName(s.Verify):
		conflict("--verify", verifyName(q.Verify), verifyName(s.Verify))
	}
	switch {
	case s.MaxFrame == 0:
		s.MaxFrame = int64(q.MaxFrame)
	case q.MaxFrame != 0 && int64(q.MaxFrame) != s.MaxFrame:
		conflict("--size", strconv.Itoa(q.MaxFrame), strconv.FormatInt(s.MaxFrame, 10))
	}
	switch {
	case s.Expect == 0:
		s.Expect = q.Expect
	case q.Expect != 0 && q.Expect != s.Expect:
		conflict("--expect", strconv.FormatUint(q.Expect, 10), strconv.FormatUint(s.Expect, 10))
	}
	switch {
	case s.Slots == 0:
		s.Slots = q.Slots
	case q.Slots != 0 && q.Slots != s.Slots:
		conflict("--slots", strconv.Itoa(q.Slots), strconv.Itoa(s.Slots))
	}
	switch {
	case s.RecvMode == "":
		s.RecvMode = q.RecvMode
	case q.RecvMode != "" && q.RecvMode != s.RecvMode:
		conflict("--recv-mode", q.RecvMode, s.RecvMode)
	}
	s.BusyWait = s.BusyWait || q.BusyWait
	if s.Batch == 0 {
		s.Batch = q.Batch // the receiver's own batch is its tuning, not a contradiction
	}
	if len(bad) > 0 {
		return s, errors.New(strings.Join(bad, "; "))
	}
	return s, nil
}

// Kind is the kind of the receiving backend (network, local, …).
func (r *Reception) Kind() backend.Kind { return r.kind }

// Info describes the opened receiver (backend, mode, interface); with no
// sender (Sender), the backend asked for only.
func (r *Reception) Info() backend.Info {
	if r.noSender {
		return backend.Info{Backend: r.spec.Backend, NUMANode: -1}
	}
	return r.rx.Info()
}

// Wait receives until a stop condition of the spec (Expect, Duration,
// IdleTimeout), the sender going away or ctx, closes the receiver and
// returns the result. progress, when not nil, is called from the receive
// loop every every (0: once a second; at least recv.MinProgressEvery),
// each call with the latency of the frames since the previous one. A
// sender that asked for progress messages on the control connection
// (peer.RecvRequest.ProgressMs) gets them at its period, or at every when
// progress is given with one. With Expect, a result whose frames did not
// all arrive intact comes with a *report.CheckFailure as the error.
func (r *Reception) Wait(progress func(recv.Progress), every time.Duration) (recv.Result, error) {
	if r.noSender {
		return r.checked(nothingReceived(r.Info(), r.spec.Expect), nil)
	}
	opts := recv.Options{Expect: r.spec.Expect, Duration: r.spec.Duration, IdleTimeout: r.spec.IdleTimeout, Batch: r.spec.Batch,
		Progress: progress, ProgressEvery: every, IPFragments: r.kind == backend.KindNetwork, Streams: r.streams}
	if d := r.spec.Duration; d > 0 {
		// Counted from Receive: the wait for a sender took some.
		opts.Duration = max(d-time.Since(r.start), time.Nanosecond)
	}
	if r.ctl != nil {
		if pe := r.ctl.ProgressEvery(); pe > 0 {
			ctl := r.ctl
			opts.Progress = func(p recv.Progress) {
				ctl.Progress(p)
				if progress != nil {
					progress(p)
				}
			}
			if progress == nil || every <= 0 {
				opts.ProgressEvery = pe
			}
		}
	}
	if r.summed {
		opts.Summed = frame.DecodePayloadSummed
	}
	res, err := recv.Run(r.ctx, r.rx, r.decode, opts)
	if r.ctl != nil {
		r.ctl.Answer(res, err)
		r.ctl.Close()
	}
	r.rx.Close()
	if cerr := r.inst.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return r.checked(res, err)
}

// checked returns res with err, or with Expect the failed check of a
// result whose frames did not all arrive intact.
func (r *Reception) checked(res recv.Result, err error) (recv.Result, error) {
	if err != nil {
		return res, err
	}
	if r.spec.Expect > 0 && !res.OK() {
		return res, &report.CheckFailure{Check: report.CheckVerification, Message: fmt.Sprintf("%d of %d expected frames arrived intact (lost %d, duplicated %d, corrupted %d, missing %d)",
			res.Frames, r.spec.Expect, res.Lost, res.Duplicated, res.Corrupted, res.Missing)}
	}
	return res, nil
}

// nothingReceived is the result of a reception whose duration ran out
// before a sender came.
func nothingReceived(info backend.Info, expect uint64) recv.Result {
	res := recv.NewTracker().Result()
	res.Stop = "duration"
	res.Backend = &info
	res.Expected, res.Missing = expect, expect
	return res
}
