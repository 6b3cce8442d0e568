package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// DefaultLinger is how long a run's endpoint stays up after the run
// (--metrics-linger's default): a few seconds, for a scrape every second
// or two to see the final counts; a slower scraper needs a longer linger
// (the manifests of deploy/kubernetes give 30 s for a 5 s interval).
const DefaultLinger = 5 * time.Second

// Endpoint serves a registry's metrics in Prometheus's text exposition
// format at /metrics (GET and HEAD), until Close.
type Endpoint struct {
	ln       net.Listener
	srv      *http.Server
	done     chan struct{}
	loopback bool
}

// ListenAddr resolves a --metrics-listen address: "PORT" and ":PORT" are
// 127.0.0.1:PORT (loopback unless told otherwise), "HOST:PORT" is that
// host's, the user's explicit choice ("0.0.0.0:9479" every interface).
// Port 0 picks a free one.
func ListenAddr(s string) (string, error) {
	if s == "" {
		return "", errors.New("no address: give HOST:PORT, or PORT for 127.0.0.1:PORT")
	}
	if !strings.Contains(s, ":") {
		s = ":" + s
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", fmt.Errorf("%q is not HOST:PORT: %v", s, err)
	}
	if _, err := net.LookupPort("tcp", port); err != nil || port == "" {
		return "", fmt.Errorf("port %q is not a port number: give 1 to 65535 (0: any free port)", port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Listen starts serving g's metrics at addr (as ListenAddr resolves it).
// On a loopback address a request must name a loopback host (localhost,
// 127.0.0.1, [::1]) or an IP address: a page elsewhere that rebinds its
// own name to 127.0.0.1 (DNS rebinding) gets 403.
func Listen(addr string, g prometheus.Gatherer) (*Endpoint, error) {
	a, err := ListenAddr(addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", a)
	if err != nil {
		return nil, err
	}
	e := &Endpoint{ln: ln, done: make(chan struct{})}
	if ta, ok := ln.Addr().(*net.TCPAddr); ok {
		e.loopback = ta.IP.IsLoopback()
	}
	metrics := promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "metrics are read with GET", http.StatusMethodNotAllowed)
			return
		}
		if e.loopback && !hostAllowed(r.Host) {
			http.Error(w, "this endpoint listens on loopback and answers requests for a loopback host or an IP address only", http.StatusForbidden)
			return
		}
		metrics.ServeHTTP(w, r)
	})
	e.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second}
	go func() {
		defer close(e.done)
		_ = e.srv.Serve(ln)
	}()
	return e, nil
}

// hostAllowed reports whether a request's Host names a loopback host or
// an IP address (a scraper that dials an address names it).
func hostAllowed(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.Trim(h, "[]")
	return h == "localhost" || net.ParseIP(h) != nil
}

// Addr is the address the endpoint listens on (the port chosen for 0).
func (e *Endpoint) Addr() net.Addr { return e.ln.Addr() }

// URL is the endpoint's metrics URL.
func (e *Endpoint) URL() string { return "http://" + e.ln.Addr().String() + "/metrics" }

// Close stops serving, giving a scrape in flight up to a second.
func (e *Endpoint) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := e.srv.Shutdown(ctx)
	<-e.done
	if errors.Is(err, context.DeadlineExceeded) {
		err = e.srv.Close()
	}
	return err
}

// Registry returns a private registry for one run's collector c, with the
// constant label segment when segment is not "" (a segmented run's "1/3").
func Registry(c prometheus.Collector, segment string) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	var r prometheus.Registerer = reg
	if segment != "" {
		r = prometheus.WrapRegistererWith(prometheus.Labels{"segment": segment}, reg)
	}
	r.MustRegister(c)
	return reg
}
