package job

import (
	"strings"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/sys"
)

// backendOptions maps a Spec and the Env onto the backend's options: the
// one place that knows both, so that a change to backend.Options changes
// only this function and recvOptions.
func backendOptions(s Spec, env Env, fs *frameSet) backend.Options {
	o := backend.Options{
		MaxFrame:       fs.maxFrame,
		MaxUntagged:    fs.maxUntagged,
		UntaggedStream: fs.untaggedStream,
		Batch:          s.Batch,
		Verify:         verifyName(s.Verify),
		Peer:           peerChoice(s, env),
		Env:            backendEnv(env),
		Net: backend.NetOptions{
			Interface:   s.Interface,
			RingDepth:   s.RingDepth,
			RingBytes:   orDefault(s.RingBytes, s.Limits.RingBytes, DefaultRingBytes),
			NoTxRing:    s.NoTxRing,
			QdiscBypass: s.QdiscBypass,
			TxCopy:      s.TxCopy,
			XDPMode:     s.XDPMode,
			BusyPoll:    s.BusyPoll,
		},
		File: backend.FileOptions{Output: s.Output, Format: s.Format},
		Pipe: backend.PipeOptions{FIFO: s.FIFO, Vmsplice: s.Vmsplice, Size: int(s.PipeSize)},
		Mem:  backend.MemOptions{RecvMode: s.RecvMode, BusyWait: s.BusyWait, Slots: s.Slots},
		DPDK: backend.DPDKOptions{EALArgs: strings.Fields(s.DPDKArgs)},
	}
	o.Device = backend.DeviceOptions{Device: s.Device, Sync: s.Sync, SyncMode: s.SyncMode}
	if o.Net.RingDepth == 0 {
		o.Net.RingDepth = DefaultRingDepth
	}
	if o.Net.TxCopy == "" {
		o.Net.TxCopy = backend.TxCopyAuto
	}
	if o.Net.XDPMode == "" {
		o.Net.XDPMode = "auto"
	}
	if s.Queue != nil {
		o.Net.Queue = *s.Queue
	}
	return o
}

// peerChoice is where a local path's receiver is (backend.Peer): Connect
// names a listening receiver's socket ("-": the pipe's standard output);
// without it the sender starts its own, except that the pipe path writes
// to a standard output that is a pipe when the run does not start its
// receiver itself.
func peerChoice(s Spec, env Env) backend.Peer {
	switch s.Connect {
	case "", "auto":
		if s.Connect == "" && !s.StartReceiver && s.BackendName() == "pipe" && env.Stdout != nil && sys.IsPipe(int(env.Stdout.Fd())) {
			return backend.Peer{Mode: backend.PeerStream}
		}
		return backend.Peer{Mode: backend.PeerOwn}
	case "-":
		return backend.Peer{Mode: backend.PeerStream}
	}
	return backend.Peer{Mode: backend.PeerConnect, Sock: s.Connect}
}

// backendEnv is the part of env a backend may use.
func backendEnv(env Env) backend.Env {
	be := backend.Env{Stdin: env.Stdin, Stdout: env.Stdout, Launcher: env.Launcher}
	if env.Stderr != nil {
		be.Stderr = env.Stderr
	}
	return be
}

// recvOptions maps a RecvSpec onto the receiving backend's options.
func recvOptions(s RecvSpec, env Env) backend.Options {
	o := backend.Options{
		Workers: 1, Batch: s.Batch, Listen: s.Listen, Verify: verifyName(s.Verify), MaxFrame: int(s.MaxFrame),
		Env: backendEnv(env),
		Net: backend.NetOptions{Interface: s.Interface, RingBytes: s.RingBytes, NoRxRing: s.NoRxRing,
			Queue: s.Queue, XDPMode: s.XDPMode, BusyPoll: s.BusyPoll},
		Pipe: backend.PipeOptions{FIFO: s.FIFO, Size: int(s.PipeSize)},
		Mem:  backend.MemOptions{RecvMode: s.RecvMode, BusyWait: s.BusyWait, Slots: s.Slots},
		DPDK: backend.DPDKOptions{EALArgs: strings.Fields(s.DPDKArgs)},
	}
	if o.Net.RingBytes == 0 {
		o.Net.RingBytes = DefaultRingBytes
	}
	return o
}
