package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/job"
)

// problem posts a job and returns its one problem of field; the test fails
// when the job is not refused with 400 for that field.
func (ts *testServer) problem(body, field string) FieldError {
	ts.t.Helper()
	code, data := ts.do("POST", "/api/v1/jobs", body)
	var eb ErrorBody
	if code != http.StatusBadRequest || json.Unmarshal(data, &eb) != nil {
		ts.t.Errorf("POST %s: %d %.300s; want 400 about %s", body, code, data, field)
		return FieldError{}
	}
	for _, e := range eb.Errors {
		if e.Field == field {
			return e
		}
	}
	ts.t.Errorf("POST %s: %s; want a problem of %s", body, data, field)
	return FieldError{}
}

func jobJSON(kv ...any) string {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// TestOutputNotServerFiles: a job may not write into the server's own
// files: its database, the database's WAL, shared-memory and lock files,
// or any file the server holds open (its log, another job's output),
// under whatever name (a symlink, a path with ..); the history survives.
func TestOutputNotServerFiles(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "jobs.db")
	ts := newTest(t, Options{DB: db})
	held, err := os.Create(filepath.Join(dir, "serve.log")) // this process is the server: a file it holds open
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	held.WriteString("the server's log\n")
	if err := os.Symlink(db, filepath.Join(dir, "link.pcap")); err != nil {
		t.Fatal(err)
	}
	before := ts.create(`{"name": "kept", "count": 5}`)
	ts.wait(before.ID)
	for _, tc := range []struct{ path, why string }{
		{db, "the server's job database"},
		{db + "-wal", "the server's job database"},
		{db + "-shm", "the server's job database"},
		{db + ".lock", "the server's job database"},
		{db + "-journal", "the server's job database"},
		{filepath.Join(dir, "link.pcap"), "the server's job database"},
		{filepath.Join(dir, "sub", "..", "jobs.db"), "the server's job database"},
		{held.Name(), "a file this server holds open"},
	} {
		e := ts.problem(jobJSON("backend", "pcapfile", "output", tc.path, "count", 10), "output")
		if !strings.Contains(e.Reason, tc.why) || e.Fix == "" {
			t.Errorf("output %s: %+v; want a reason with %q and a fix", tc.path, e, tc.why)
		}
	}
	e := ts.problem(jobJSON("backend", "pipe", "fifo", db, "count", 10), "fifo")
	if !strings.Contains(e.Reason, "the server's job database") {
		t.Errorf("fifo %s: %+v", db, e)
	}
	// A running job's output is held open: a second job may not write it.
	out := filepath.Join(dir, "run.pcap")
	first := ts.create(jobJSON("backend", "pcapfile", "output", out, "rate", "100pps"))
	e = ts.problem(jobJSON("backend", "pcapfile", "output", out, "count", 10), "output")
	if !strings.Contains(e.Reason, "a file this server holds open") {
		t.Errorf("the output of running job %d: %+v", first.ID, e)
	}
	ts.do("POST", fmt.Sprintf("/api/v1/jobs/%d/stop", first.ID), nil)
	ts.wait(first.ID)

	if b, _ := os.ReadFile(held.Name()); string(b) != "the server's log\n" {
		t.Errorf("the held file now holds %q", b)
	}
	if code, data := ts.do("GET", fmt.Sprintf("/api/v1/jobs/%d", before.ID), nil); code != http.StatusOK || !strings.Contains(string(data), `"kept"`) {
		t.Errorf("the history after the refused jobs: %d %.300s", code, data)
	}
}

// TestJobFilesConfined: with Options.JobFiles (server.job_files) every
// file a job names (output, fifo, template, pcap, payload_file, connect,
// and the captures a template replays) must lie in that directory;
// relative paths are taken from it; .. and symlinks out of it are
// refused, and a template outside it is never read (its first line cannot
// come back in an error).
func TestJobFilesConfined(t *testing.T) {
	dir := t.TempDir()
	files := filepath.Join(dir, "files")
	if err := os.Mkdir(files, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "secret.wpg.yaml")
	if err := os.WriteFile(secret, []byte("hunter2: the first line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(files, "up")); err != nil {
		t.Fatal(err)
	}
	tmpl := "streams:\n  - name: inside\n    ipv4: {src: 198.18.0.1, dst: 198.19.0.1}\n    udp: {src: 1024, dst: 9}\n"
	if err := os.WriteFile(filepath.Join(files, "t.wpg.yaml"), []byte(tmpl), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := newTest(t, Options{JobFiles: files})

	// Inside: relative to the directory, or absolute in it.
	v := ts.create(jobJSON("backend", "pcapfile", "output", "out.pcap", "template", "t.wpg.yaml", "count", 5))
	if got := ts.wait(v.ID); got.Status != StatusDone {
		t.Fatalf("job in the directory: %+v", got)
	}
	if _, err := os.Stat(filepath.Join(files, "out.pcap")); err != nil {
		t.Errorf("the relative output was not written into the directory: %v", err)
	}
	v = ts.create(jobJSON("backend", "pcapfile", "output", filepath.Join(files, "abs.pcap"), "count", 5))
	ts.wait(v.ID)

	for _, tc := range []struct{ field, value string }{
		{"output", filepath.Join(dir, "outside.pcap")},
		{"output", "../outside.pcap"},
		{"output", "up/outside.pcap"},
		{"output", "/etc/wpg-never.pcap"},
		{"template", secret},
		{"template", "up/secret.wpg.yaml"},
		{"pcap", "/etc/hostname"},
		{"payload_file", "/etc/hostname"},
		{"fifo", filepath.Join(dir, "fifo")},
		{"connect", filepath.Join(dir, "recv.sock")},
	} {
		body := map[string]any{tc.field: tc.value, "count": 5}
		switch tc.field {
		case "output":
			body["backend"] = "pcapfile"
		case "payload_file", "connect":
			body["backend"] = "shm"
		case "fifo":
			body["backend"] = "pipe"
		}
		b, _ := json.Marshal(body)
		e := ts.problem(string(b), tc.field)
		if !strings.Contains(e.Reason, "outside the job files directory "+files) || !strings.Contains(e.Fix, files) {
			t.Errorf("%s %s: %+v; want it refused as outside %s, with a fix naming it", tc.field, tc.value, e, files)
		}
		if strings.Contains(e.Reason+e.Fix, "hunter2") {
			t.Errorf("%s %s: the error shows the file's first line: %+v", tc.field, tc.value, e)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "outside.pcap")); err == nil {
		t.Error("a job wrote outside the job files directory")
	}
	// A capture a template replays is a file the job reads too.
	replaying := "streams:\n  - pcap: " + secret + "\n"
	e := ts.problem(jobJSON("template_text", replaying), "template")
	if !strings.Contains(e.Reason, "outside the job files directory") || strings.Contains(e.Reason+e.Fix, "hunter2") {
		t.Errorf("a template replaying %s: %+v", secret, e)
	}
	// The previews read the captures too: the API's and the new-job page's.
	code, data := ts.do("POST", "/api/v1/preview", jobJSON("template", replaying))
	if code != http.StatusBadRequest || !strings.Contains(string(data), "outside the job files directory") || strings.Contains(string(data), "hunter2") {
		t.Errorf("preview of a template replaying %s: %d %.300s", secret, code, data)
	}
	resp, html := ts.page("POST", "/ui/preview", url.Values{"template_text": {replaying}}, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(html, "outside the job files directory") || strings.Contains(html, "hunter2") {
		t.Errorf("the new-job page's preview of a template replaying %s: %d %.300s", secret, resp.StatusCode, html)
	}
}

// TestJobFilesConfineDPDKAndDevice: with --job-files, the files a job's
// dpdk_args name (a --vdev's captures and sockets, --trace-dir,
// --huge-dir) must lie in the directory too (a relative one is taken
// from it), what the check cannot follow (-d, a --file-prefix with a
// path, an option it does not know) is refused, and device (udmabuf)
// must be a character device node under /dev.
func TestJobFilesConfineDPDKAndDevice(t *testing.T) {
	dir := t.TempDir()
	files := filepath.Join(dir, "files")
	if err := os.Mkdir(files, 0o755); err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(files, "udmabuf0") // a plain file by a device's name
	if err := os.WriteFile(fake, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ts := newTest(t, Options{JobFiles: files})
	for _, c := range []struct{ field, value, reason string }{
		{"dpdk_args", "--no-huge --vdev net_pcap0,tx_pcap=" + filepath.Join(dir, "outside.pcap"), "outside the job files directory " + files},
		{"dpdk_args", "--vdev=net_pcap0,rx_pcap=/etc/hostname", "outside the job files directory"},
		{"dpdk_args", "--no-huge --trace-dir /etc", "outside the job files directory"},
		{"dpdk_args", "--vdev net_virtio_user0,path=/dev/vhost-net", "outside the job files directory"},
		{"dpdk_args", "--no-huge -d /tmp/librte_evil.so", "shared object"},
		{"dpdk_args", "--file-prefix ../../tmp/x", "no plain name"},
		{"dpdk_args", "--trace-d=/tmp", "not an EAL option"},
		{"device", "/etc/passwd", "not a character device under /dev"},
		{"device", fake, "not a character device under /dev"},
		{"device", "udmabuf0", "not a character device under /dev"},
		{"device", "/dev/../etc/udmabuf0", "not a character device under /dev"},
	} {
		body := jobJSON("backend", "dpdk", "interface", "0", c.field, c.value, "count", 5)
		if c.field == "device" {
			body = jobJSON("backend", "udmabuf", c.field, c.value, "count", 5)
		}
		e := ts.problem(body, c.field)
		if !strings.Contains(e.Reason, c.reason) || e.Fix == "" {
			t.Errorf("%s %s: %+v; want it refused: %s, with a fix", c.field, c.value, e, c.reason)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "outside.pcap")); err == nil {
		t.Error("a job wrote outside the job files directory")
	}
	// Inside: the paths are taken from the directory, and the spec the
	// job runs with names them.
	spec := job.Spec{Backend: "dpdk", DPDKArgs: "--no-huge -m 512 --vdev net_pcap0,tx_pcap=out.pcap,iface=lo --trace-dir=" + files + " --file-prefix wpg1"}
	if ps := ts.s.checkFiles(&spec); ps != nil {
		t.Errorf("dpdk_args in the directory: %v", ps)
	}
	if want := "--no-huge -m 512 --vdev net_pcap0,tx_pcap=" + filepath.Join(files, "out.pcap") + ",iface=lo --trace-dir=" + files + " --file-prefix wpg1"; spec.DPDKArgs != want {
		t.Errorf("dpdk_args %q, want %q", spec.DPDKArgs, want)
	}
	spec = job.Spec{Backend: "udmabuf", Device: "/dev/null"}
	if ps := ts.s.checkFiles(&spec); ps != nil {
		t.Errorf("a character device under /dev: %v", ps)
	}
}
