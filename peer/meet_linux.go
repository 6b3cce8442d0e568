package peer

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/wpg-dev/wpg/backend"

	"github.com/wpg-dev/wpg/internal/sys"
)

// Meeting is the receiving side of a meeting with a sender of backend
// Name (Meet): the connection, the sender's hello, and the descriptors it
// passed.
type Meeting struct {
	Name  string
	Conn  *net.UnixConn
	Hello Hello
	// Fds are the passed descriptors not yet taken over by the receiver
	// (set it to nil once they are); Refuse closes them.
	Fds []int
}

// NeedListen is the error of a receiver of backend name started without
// --listen, or nil.
func NeedListen(name, listen string) error {
	if listen == "" {
		return backend.ErrorfAt(name, "receiver", "needs --listen SOCK (the socket the sender connects to with --connect SOCK)")
	}
	return nil
}

// Meet accepts one sender's data connection on o.Rendezvous (the listener
// job.Receive accepted the control connection on) or, without one, on
// o.Listen, reads its hello within wait and checks that it uses backend
// name. On an error nothing is left open, and a sender of another backend
// is told why.
func Meet(ctx context.Context, name string, o backend.Options, wait time.Duration) (*Meeting, error) {
	if err := NeedListen(name, o.Listen); err != nil {
		return nil, err
	}
	var conn *net.UnixConn
	var err error
	if o.Rendezvous != nil {
		conn, err = acceptOn(ctx, o.Rendezvous, o.Listen)
	} else {
		conn, err = Accept(ctx, o.Listen)
	}
	if err != nil {
		return nil, backend.ErrorfAt(name, "receiver", "%w", err)
	}
	h, fds, err := Recv(conn, wait)
	if err != nil {
		conn.Close()
		return nil, backend.ErrorfAt(name, "receiver", "%w", err)
	}
	m := &Meeting{Name: name, Conn: conn, Hello: h, Fds: fds}
	if h.Backend != name {
		return nil, m.Refuse(fmt.Errorf("the sender uses backend %q: start the receiver with --backend %s", h.Backend, h.Backend))
	}
	return m, nil
}

// Refuse closes the descriptors not taken over, tells the sender why the
// receiver cannot go on, closes the connection, and returns err as the
// receiver's error.
func (m *Meeting) Refuse(err error) error {
	for _, fd := range m.Fds {
		sys.CloseFd(fd)
	}
	m.Fds = nil
	_ = Send(m.Conn, Hello{Backend: m.Name, PID: os.Getpid(), Error: err.Error()})
	m.Conn.Close()
	return backend.ErrorfAt(m.Name, "receiver", "%w", err)
}
