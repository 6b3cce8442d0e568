package testbed_test

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/testbed"
)

func TestVethLifecycle(t *testing.T) {
	var v *testbed.Veth
	t.Run("create", func(t *testing.T) {
		v = testbed.NewVeth(t)
		if _, err := net.InterfaceByName(v.Outer); err != nil {
			t.Fatalf("outer end: %v", err)
		}
		if _, err := net.InterfaceByName(v.Inner); err == nil {
			t.Fatal("inner end visible outside its namespace")
		}
		// Inside the namespace, on a locked thread.
		var inner *net.Interface
		if err := v.Do(func() (err error) {
			inner, err = net.InterfaceByName(v.Inner)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if inner.Flags&net.FlagUp == 0 {
			t.Fatalf("inner end is down: %v", inner.Flags)
		}
		// A command in the namespace.
		out, err := v.Command(context.Background(), "ip", "-o", "link", "show").CombinedOutput()
		if err != nil || !strings.Contains(string(out), v.Inner) || strings.Contains(string(out), v.Outer+"@") {
			t.Fatalf("ip link in the namespace: %v\n%s", err, out)
		}
		// The caller's thread never left its namespace.
		if _, err := net.InterfaceByName(v.Outer); err != nil {
			t.Fatalf("after Do: %v", err)
		}
	})
	if v == nil {
		return
	}
	// Cleanup ran when the subtest ended.
	if _, err := net.InterfaceByName(v.Outer); err == nil {
		t.Errorf("%s still exists after the test", v.Outer)
	}
	if _, err := os.Stat("/run/netns/" + v.NS); err == nil {
		t.Errorf("namespace %s still exists after the test", v.NS)
	}
}
