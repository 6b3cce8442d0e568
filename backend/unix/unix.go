package unix

import "github.com/wpg-dev/wpg/backend"

func init() {
	backend.Register(backend.Registration{
		Name:      "unix",
		Kind:      backend.KindLocal,
		Summary:   "unix stream socket with enlarged buffers, the everyday baseline",
		Open:      open,
		Receives:  true,
		Payload:   true,
		NeedsPeer: true,
		Options:   []string{"connect", "listen"},
	})
}
