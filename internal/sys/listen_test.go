package sys

import (
	"errors"
	"net"
	"strings"
	"testing"
)

// A port already taken gets a hint that says how to go on.
func TestListenHintPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = net.Listen("tcp", ln.Addr().String())
	if err == nil {
		t.Fatal("a second listen on the same port succeeded")
	}
	if h := ListenHint(err); !strings.Contains(h, "--listen") || !strings.Contains(h, "ss -ltnp") {
		t.Errorf("hint %q", h)
	}
	if h := ListenHint(errors.New("other")); h != "" {
		t.Errorf("hint for another error: %q", h)
	}
}
