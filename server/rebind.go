package server

import (
	"fmt"
	"net"
	"net/http"
	"strings"
)

// A server without a token answers only requests addressed to it by a
// loopback name or address (or the address it listens on): a web page on
// another site whose name it re-points at 127.0.0.1 (DNS rebinding) is
// same-origin with itself, so the browser lets it read the answers and
// Origin checks see nothing wrong; its requests still carry its own name
// in Host, and that is what this refuses.

// hostAllowed reports whether host (a Host header: name or address, with
// or without a port) names this server without a token: localhost and
// its subdomains (RFC 6761: always loopback in browsers), a loopback
// address, or one of extra (the listen addresses' hosts).
func hostAllowed(host string, extra []string) bool {
	h := host
	if name, _, err := net.SplitHostPort(host); err == nil {
		h = name
	}
	h = strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
	if h == "" {
		return false
	}
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return true
	}
	for _, x := range extra {
		if x != "" && strings.EqualFold(strings.Trim(x, "[]"), h) {
			return true
		}
	}
	return false
}

// listenHost is the host part of a listen address ("" for none or for an
// address that binds every interface).
func listenHost(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	if ip := net.ParseIP(strings.Trim(h, "[]")); ip != nil && ip.IsUnspecified() {
		return ""
	}
	return h
}

// checkHost refuses, on a server without a token, every request whose
// Host does not name it (hostAllowed), before anything else sees it:
// 403, the API's JSON error for /api/, /metrics and /healthz, the error
// page for the rest.
func (s *Server) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.opt.Token != "" || hostAllowed(r.Host, s.listenHosts()) {
			next.ServeHTTP(w, r)
			return
		}
		s.log.Warn("refused a request for another host name (a DNS-rebinding page?)", "host", r.Host, "client", clientAddr(r), "method", r.Method, "path", r.URL.Path)
		reason := fmt.Sprintf("Host %q is not a loopback name or address: this server has no token, so it answers only requests for localhost, 127.0.0.1 or [::1] (a web page could otherwise reach it through DNS rebinding)", r.Host)
		fix := "open it as http://127.0.0.1:PORT/ or http://localhost:PORT/, or give wpg serve a token (--token-file) to reach it under other names (docs/serve.md)"
		if p := r.URL.Path; strings.HasPrefix(p, "/api/") || p == "/metrics" || p == "/healthz" {
			writeJSON(w, http.StatusForbidden, apiError(reason, fix, 0))
			return
		}
		s.render(w, http.StatusForbidden, "error", "Wrong address", reason+": "+fix)
	})
}

// listenHosts are the hosts of the addresses the server listens on.
func (s *Server) listenHosts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hosts
}
