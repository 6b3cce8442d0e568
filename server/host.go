package server

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/wpg-dev/wpg/sysinfo"
)

func (s *Server) handleSysinfo(w http.ResponseWriter, _ *http.Request) {
	s.sysOnce.Do(func() {
		env, err := sysinfo.HostFS().Environment("")
		body := map[string]any{"environment": env, "features": sysinfo.Features()}
		if err != nil {
			body["error"] = err.Error()
		}
		s.sysJSON, _ = json.Marshal(body)
	})
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(s.sysJSON)
}

type hostPage struct {
	Table    string
	Features []sysinfo.Feature
	Backends []BackendInfo
	Error    string
}

func (s *Server) handleHostPage(w http.ResponseWriter, _ *http.Request) {
	var d hostPage
	env, err := sysinfo.HostFS().Environment("")
	if err != nil {
		d.Error = err.Error()
	}
	var b bytes.Buffer
	env.WriteTable(&b)
	d.Table = b.String()
	d.Features = s.opt.Probes.Features()
	d.Backends = s.Backends()
	s.render(w, http.StatusOK, "host", "Host", d)
}
