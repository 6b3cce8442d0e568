package engine

import (
	"errors"
	"io/fs"
	"testing"
)

func TestResultErrFoldsAlikeWorkers(t *testing.T) {
	missing := errors.New(`afpacket: interface "nosuch0": no such network interface`)
	r := &Result{Workers: []WorkerResult{
		{Err: &WorkerError{Worker: 0, Err: missing, Frames: -1}},
		{Err: &WorkerError{Worker: 1, Err: missing, Frames: -1}},
		{},
		{Err: &WorkerError{Worker: 3, Err: fs.ErrPermission, Frames: 7}},
		{Err: &WorkerError{Worker: 4, Err: fs.ErrPermission, Frames: 5}},
		{Err: &WorkerError{Worker: 5, Err: missing, Frames: -1}},
	}}
	want := `workers 0, 1: afpacket: interface "nosuch0": no such network interface` + "\n" +
		`workers 3, 4: permission denied (after 12 frames in all)` + "\n" +
		`worker 5: afpacket: interface "nosuch0": no such network interface`
	err := r.Err()
	if err == nil || err.Error() != want {
		t.Fatalf("Err() =\n%v\nwant\n%s", err, want)
	}
	if !errors.Is(err, fs.ErrPermission) {
		t.Error("the folded error does not unwrap to the workers' error")
	}
	if r.Workers[0].Err.Error() != `worker 0: afpacket: interface "nosuch0": no such network interface` {
		t.Errorf("worker 0's own error changed: %v", r.Workers[0].Err)
	}
	// Sixteen workers that failed alike read as a range, not sixteen numbers.
	var many Result
	for i := range 16 {
		if i != 9 {
			many.Workers = append(many.Workers, WorkerResult{Err: &WorkerError{Worker: i, Err: missing, Frames: -1}})
		}
	}
	many.Workers = append(many.Workers, WorkerResult{Err: &WorkerError{Worker: 16, Err: missing, Frames: -1}})
	if got, want := many.Err().Error(), `workers 0-8, 10-16: afpacket: interface "nosuch0": no such network interface`; got != want {
		t.Errorf("Err() = %q, want %q", got, want)
	}
	if (&Result{Workers: []WorkerResult{{}}}).Err() != nil {
		t.Error("no worker error, but Err() is not nil")
	}
}
