//go:build linux

package job

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wpg-dev/wpg/backend"
)

// A pipe run whose standard output is a file (wpg send --backend pipe >
// out.bin) sends to a receiver of its own and left the file without a
// frame and without a word: the report says so and what to do instead.
// With standard output a pipe (the frames go there), a FIFO, a receiver
// to connect to, or another backend, nothing is said.
func TestPipeToAFileIsNoted(t *testing.T) {
	file, err := os.Create(filepath.Join(t.TempDir(), "out.bin"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	pipe, err := backend.Lookup("pipe")
	if err != nil {
		t.Fatal(err)
	}
	shm, err := backend.Lookup("shm")
	if err != nil {
		t.Fatal(err)
	}
	plain := NewSpec()
	fifo := NewSpec()
	fifo.FIFO = "/tmp/f"
	connect := NewSpec()
	connect.Connect = "@sock"
	for _, c := range []struct {
		name   string
		s      Spec
		reg    backend.Registration
		stdout *os.File
		want   bool
	}{
		{"a file", plain, pipe, file, true},
		{"a pipe", plain, pipe, w, false},
		{"a FIFO given", fifo, pipe, file, false},
		{"a receiver to connect to", connect, pipe, file, false},
		{"another backend", plain, shm, file, false},
	} {
		if got := stdoutFileNote(c.s, Env{Stdout: c.stdout}, c.reg) != ""; got != c.want {
			t.Errorf("%s: noted %v, want %v", c.name, got, c.want)
		}
	}
}
