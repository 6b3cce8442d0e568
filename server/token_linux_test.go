package server

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestWeakTokens: a blank token, one with blanks at its ends (the login
// form trims what is typed: nobody could log in) or a control character,
// and one shorter than MinTokenLen are refused with a clear error, by
// CheckToken, New and ListenAndServe alike; no token at all is not a
// token (loopback only).
func TestWeakTokens(t *testing.T) {
	for _, tc := range []struct{ token, want string }{
		{" ", "is blank"},
		{"\t \n", "is blank"},
		{"a", "too short (1 of the 16 characters"},
		{"s3cret", "too short (6 of the 16 characters"},
		{" " + testToken, "blanks at its ends"},
		{testToken + "\n", "blanks at its ends"},
		{testToken + "\x00x", "control character"},
	} {
		err := CheckToken(tc.token)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "openssl rand") && strings.Contains(tc.want, "short") {
			t.Errorf("CheckToken(%q) = %v; want an error with %q", tc.token, err, tc.want)
		}
		if _, err := New(context.Background(), Options{DB: filepath.Join(t.TempDir(), "jobs.db"), Token: tc.token}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New with token %q: %v", tc.token, err)
		}
		if err := ListenAndServe(context.Background(), Options{Listen: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "jobs.db"), Token: tc.token}, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ListenAndServe with token %q: %v", tc.token, err)
		}
	}
	for _, ok := range []string{"", testToken, strings.Repeat("x", MinTokenLen)} {
		if err := CheckToken(ok); err != nil {
			t.Errorf("CheckToken(%q): %v", ok, err)
		}
	}
}
