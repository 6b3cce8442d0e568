package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// TestServeUIAndSignal runs the built `wpg serve` with a token file on
// 127.0.0.1:0: the web UI sends a browser without a session to the login
// page, the login form sets the session cookie, a job started with it
// records who started it, and SIGTERM stops the running job, stores its
// report and exits 0; a second `wpg serve` on the same database shows the
// job in its history (after a new login: a restart ends the sessions).
func TestServeUIAndSignal(t *testing.T) {
	dir := t.TempDir()
	tokFile, db := filepath.Join(dir, "token"), filepath.Join(dir, "jobs.db")
	if err := os.WriteFile(tokFile, []byte("e2e-token-e2e-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	start := func() (*exec.Cmd, string, *strings.Builder) {
		cmd := exec.Command(testbed.Wpg(t), "serve", "--listen", "127.0.0.1:0", "--token-file", tokFile, "--db", db)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() })
		logs := &strings.Builder{}
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			logs.WriteString(line + "\n")
			if _, rest, ok := strings.Cut(line, "listening on "); ok {
				base, _, _ := strings.Cut(rest, " ")
				go io.Copy(io.Discard, stderr)
				return cmd, base, logs
			}
		}
		t.Fatalf("wpg serve did not say where it listens:\n%s", logs)
		return nil, "", nil
	}
	cmd, base, _ := start()
	nofollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 10 * time.Second}

	resp, err := nofollow.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/login") {
		t.Fatalf("the jobs page without a session: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	login := func(base string) *http.Cookie {
		resp, err := nofollow.PostForm(base+"/login", url.Values{"token": {"e2e-token-e2e-token"}, "next": {"/"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var session *http.Cookie
		for _, c := range resp.Cookies() {
			if c.Name == "wpg_session" {
				session = c
			}
		}
		if resp.StatusCode != http.StatusSeeOther || session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode {
			t.Fatalf("login: %d %v", resp.StatusCode, resp.Cookies())
		}
		return session
	}
	session := login(base)
	form := url.Values{"backend": {"null"}, "rate": {"1kpps"}, "workers": {"1"}, "name": {"e2e"}, "started_by": {"the e2e test"}}
	req, _ := http.NewRequest("POST", base+"/jobs", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(session)
	resp, err = nofollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var id int
	if _, err := fmt.Sscanf(resp.Header.Get("Location"), "/jobs/%d", &id); resp.StatusCode != http.StatusSeeOther || err != nil {
		t.Fatalf("start from the form: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	get := func(base, path string) (int, string) {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.AddCookie(session)
		resp, err := nofollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// Let it send for a while (bounded), then SIGTERM.
	for range 100 {
		_, body := get(base, fmt.Sprintf("/api/v1/jobs/%d", id))
		var v struct{ Frames uint64 }
		if json.Unmarshal([]byte(body), &v) == nil && v.Frames > 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("wpg serve after SIGTERM: %v", err)
	}

	_, base, _ = start()
	// A restart ends the sessions (#23): log in again.
	if code, _ := get(base, fmt.Sprintf("/api/v1/jobs/%d", id)); code != http.StatusUnauthorized {
		t.Errorf("the session of the server before the restart: %d; want 401", code)
	}
	session = login(base)
	code, body := get(base, fmt.Sprintf("/api/v1/jobs/%d", id))
	var v struct {
		Status    string `json:"status"`
		StartedBy string `json:"started_by"`
		Client    string `json:"client"`
		Frames    uint64 `json:"frames"`
		HasReport bool   `json:"has_report"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &v) != nil || v.Status != "stopped" || v.StartedBy != "the e2e test" ||
		v.Client != "127.0.0.1" || !v.HasReport || v.Frames == 0 {
		t.Fatalf("the job after SIGTERM and a restart: %d %s", code, body)
	}
	if code, page := get(base, "/"); code != http.StatusOK || !strings.Contains(page, fmt.Sprintf(`href="/jobs/%d"`, id)) {
		t.Fatalf("the jobs page after the restart: %d", code)
	}
}
