package peer

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"

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
		return fmt.Errorf("%s receiver: needs --listen SOCK (the socket the sender connects to with --connect SOCK)", name)
	}
	return nil
}

// Meet accepts one sender on listen (--listen), reads its hello within wait
// and checks that it uses backend name. On an error nothing is left open,
// and a sender of another backend is told why.
func Meet(ctx context.Context, name, listen string, wait time.Duration) (*Meeting, error) {
	if err := NeedListen(name, listen); err != nil {
		return nil, err
	}
	conn, err := Accept(ctx, listen)
	if err != nil {
		return nil, fmt.Errorf("%s receiver: %w", name, err)
	}
	h, fds, err := Recv(conn, wait)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("%s receiver: %w", name, err)
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
	return fmt.Errorf("%s receiver: %w", m.Name, err)
}

// Reach connects a sender of backend name to its receiver: with connect ""
// or AutoPeer it starts one (`wpg recv --backend name` with childArgs and
// the --verify mode, see Start) and dials it, else it dials the `wpg recv
// --listen` socket at connect; wait bounds the dial. where names the
// receiver for messages ("receiver process PID" or the socket path); child
// is nil when dialled. On an error nothing is left running.
func Reach(ctx context.Context, name, connect, verify string, wait time.Duration, childArgs ...string) (conn *net.UnixConn, child *Process, where string, err error) {
	if connect != "" && connect != AutoPeer {
		conn, err = Dial(ctx, connect, wait, nil)
		return conn, nil, connect, err
	}
	child, err = Start(name, true, nil, append(childArgs, VerifyArgs(verify)...)...)
	if err != nil {
		return nil, nil, "", err
	}
	if conn, err = Dial(ctx, child.Sock, wait, child.Exited); err != nil {
		child.Kill()
		return nil, nil, "", err
	}
	return conn, child, fmt.Sprintf("receiver process %d", child.PID()), nil
}
