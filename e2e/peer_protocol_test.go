package e2e

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// An independently started `wpg recv --listen` whose own flags contradict
// the sender's request (peer protocol, docs/local-paths.md) refuses it:
// both sides fail with an error naming both values, and nothing hangs.
func TestPeerRequestMismatch(t *testing.T) {
	wpg := testbed.Wpg(t)
	for _, c := range []struct {
		name   string
		rx, tx []string
		want   string
	}{
		{"verify", []string{"--backend", "shm", "--verify", "off"}, []string{"--backend", "shm"}, "the sender asks for --verify on, this receiver was started with --verify off"},
		{"backend", []string{"--backend", "cma"}, []string{"--backend", "shm"}, "the sender asks for backend shm, this receiver was started with backend cma"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sock := filepath.Join(t.TempDir(), "rx.sock")
			rx := exec.Command(wpg, append(append([]string{"recv"}, c.rx...), "--listen", sock, "--json")...)
			var rxErr bytes.Buffer
			rx.Stderr = &rxErr
			if err := rx.Start(); err != nil {
				t.Fatal(err)
			}
			send := exec.Command(wpg, append(append([]string{"send"}, c.tx...), "--connect", sock, "--size", "4096", "--count", "100")...)
			var serr bytes.Buffer
			send.Stderr = &serr
			err := send.Run()
			if err == nil || !strings.Contains(serr.String(), c.want) || !strings.Contains(serr.String(), "refused the request") {
				rx.Process.Kill()
				t.Fatalf("wpg send: %v\n%s\nwant a refusal saying %q", err, serr.String(), c.want)
			}
			done := make(chan error, 1)
			go func() { done <- rx.Wait() }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(rxErr.String(), c.want) {
					t.Fatalf("wpg recv: %v\n%s\nwant an error saying %q", err, rxErr.String(), c.want)
				}
			case <-time.After(20 * time.Second):
				rx.Process.Kill()
				t.Fatal("wpg recv still running 20 s after refusing the sender")
			}
		})
	}
}
