package pipe

import "github.com/wpg-dev/wpg/backend"

func init() {
	backend.Register(backend.Registration{
		Name:      "pipe",
		Kind:      backend.KindLocal,
		Summary:   "a pipe or FIFO (stdout/stdin by default), enlarged to pipe-max-size; optional vmsplice",
		Open:      open,
		Receives:  true,
		Payload:   true,
		NeedsPeer: true,
		// One pipe carries one ordered stream of whole frames.
		SingleWorker: true,
		Options:      []string{"fifo", "vmsplice", "pipe_size", "connect"},
	})
}
