package job

import (
	"context"
	"fmt"
	"strconv"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/frame"
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
		p.wrap("backend", "", err)
		return reg, backend.Options{}, nil, p.err()
	}
	if !reg.Receives {
		p.add("backend", reg.Name, "has no receiving side", "choose one of the backends wpg sysinfo lists as receiving")
		return reg, backend.Options{}, nil, p.err()
	}
	checkBackendFields(&p, reg, func(f string) bool { return recvSet(s, f) })
	if s.Verify != "" && !reg.Payload {
		p.add("verify", "", fmt.Sprintf("checks payload frames (backends %s), not the packets of %s", joinNames(backendsWhere(true)), reg.Name), "drop {verify} (packets carry their own checksums)")
	}
	if s.Slots < 0 {
		p.add("slots", strconv.Itoa(s.Slots), "give a number of ring slots of 1 or more, or 0 for the sender's", "")
	}
	if reg.Kind == backend.KindNetwork && s.Interface == "" {
		p.add("interface", "", fmt.Sprintf("is needed: backend %s receives on a network interface", reg.Name), "add {interface} IFACE")
	}
	if s.Batch < 1 || s.Batch > 65536 {
		p.add("batch", strconv.Itoa(s.Batch), "must be between 1 and 65536", "")
	}
	if s.Duration < 0 {
		p.add("duration", s.Duration.String(), "must not be negative", "give 0 for no limit")
	}
	if s.IdleTimeout < 0 {
		p.add("idle_timeout", s.IdleTimeout.String(), "must not be negative", "give 0 for none")
	}
	if s.PipeSize != 0 && (s.PipeSize < 4096 || s.PipeSize > 1<<31) {
		p.add("pipe_size", strconv.FormatInt(s.PipeSize, 10), "give a size from 4KiB to 2GiB, e.g. 64KiB or 1MiB", "")
	}
	decode := recv.Decoder(recv.DecodePacket)
	if reg.Payload {
		mode, err := frame.ParseVerify(verifyName(s.Verify))
		if err != nil {
			p.add("verify", s.Verify, "choose on, sample or off", "")
		}
		decode = frame.PayloadDecoder(mode)
	}
	if len(p.list) > 0 {
		return reg, backend.Options{}, nil, p.err()
	}
	o := recvOptions(s, env)
	if reg.Check != nil {
		if err := reg.Check(o); err != nil {
			p.wrap("backend", "", err)
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

// Receive validates spec (every problem at once, as Problems) and opens
// the receiving side; Wait then receives. Cancelling ctx ends the
// reception (stop "interrupted").
func Receive(ctx context.Context, spec RecvSpec, env Env) (*Reception, error) {
	env = env.withDefaults()
	reg, o, decode, err := prepareRecv(spec, env)
	if err != nil {
		return nil, err
	}
	inst, err := reg.Open(ctx, o)
	if err != nil {
		return nil, err
	}
	rx, err := inst.NewReceiver()
	if err != nil {
		inst.Close()
		return nil, err
	}
	return &Reception{ctx: ctx, kind: reg.Kind, spec: spec, inst: inst, rx: rx, decode: decode}, nil
}

// Kind is the kind of the receiving backend (network, local, …).
func (r *Reception) Kind() backend.Kind { return r.kind }

// Info describes the opened receiver (backend, mode, interface).
func (r *Reception) Info() backend.Info { return r.rx.Info() }

// Wait receives until a stop condition of the spec (Expect, Duration,
// IdleTimeout), the sender going away or ctx, closes the receiver and
// returns the result. progress, when not nil, is called about once a
// second from the receive loop. With Expect, a result whose frames did
// not all arrive intact comes with a *report.CheckFailure as the error.
func (r *Reception) Wait(progress func(recv.Progress)) (recv.Result, error) {
	opts := recv.Options{Expect: r.spec.Expect, Duration: r.spec.Duration, IdleTimeout: r.spec.IdleTimeout, Batch: r.spec.Batch, Progress: progress}
	res, err := recv.Run(r.ctx, r.rx, r.decode, opts)
	r.rx.Close()
	if cerr := r.inst.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if err != nil {
		return res, err
	}
	if r.spec.Expect > 0 && !res.OK() {
		return res, &report.CheckFailure{Check: report.CheckVerification, Message: fmt.Sprintf("%d of %d expected frames arrived intact (lost %d, duplicated %d, corrupted %d, missing %d)",
			res.Frames, r.spec.Expect, res.Lost, res.Duplicated, res.Corrupted, res.Missing)}
	}
	return res, nil
}
