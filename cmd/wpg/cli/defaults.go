package cli

import (
	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/cmd/wpg/cli/config"
	"github.com/wpg-dev/wpg/job"
)

// origins names where the values of a spec's fields came from when not
// from a flag: the field's JSON name → "send.rate (wpg.toml:4)", so that
// a problem with a value from wpg.toml names the key, not a flag the user
// never typed.
type origins map[string]string

// from records that field came from config key key.
func (o origins) from(cfg *config.Config, key, field string) {
	o[field] = key + " (" + cfg.Sources[key] + ")"
}

// sendDefaults fills the fields of s that wpg.toml's [send] section (or
// the profile chosen) gives and no flag did (set reports which flags were
// given): each where the run reads it, so that a lab's defaults never trip
// the rule that refuses an option a run does nothing with. The site's rate
// goes into Limits, for job to use where the input keeps no schedule of
// its own.
func sendDefaults(cfg *config.Config, s *job.Spec, set func(flag string) bool) origins {
	o := origins{}
	given := func(key string) bool { return cfg.Sources[key] != "default" }
	if !set("backend") && given("send.backend") {
		s.Backend = cfg.Send.Backend
		o.from(cfg, "send.backend", "backend")
	}
	if !set("interface") && given("send.interface") {
		name := s.Backend
		if name == "" {
			name = "afpacket" // the default backend with an interface
		}
		if reg, err := backend.Lookup(name); err == nil && reg.Reads("interface") {
			s.Interface = cfg.Send.Interface
			o.from(cfg, "send.interface", "interface")
		}
	}
	if !set("rate") && given("send.rate") {
		s.Limits.Rate = cfg.Send.Rate
		o.from(cfg, "send.rate", "rate")
	}
	if !set("workers") && given("send.workers") {
		s.Workers = int(cfg.Send.Workers)
		o.from(cfg, "send.workers", "workers")
	}
	if !set("pin-core") && !set("pin-cores") && !set("auto-pin") && given("send.pin_cores") {
		s.Cores = cfg.Send.PinCores
		o.from(cfg, "send.pin_cores", "cores")
	}
	return o
}

// recvDefaults fills the interface of s from wpg.toml's recv.interface
// when -i is not given and the backend receives on an interface (not a
// local path's --listen or --fifo, whose backend the sender names).
func recvDefaults(cfg *config.Config, s *job.RecvSpec, set func(flag string) bool) origins {
	o := origins{}
	if set("interface") || cfg.Sources["recv.interface"] == "default" {
		return o
	}
	name := s.Backend
	switch {
	case name == "" && (s.Listen != "" || s.FIFO != ""):
		return o // a local path, its backend the sender's
	case name == "":
		name = "afpacket" // the default backend with an interface
	}
	if reg, err := backend.Lookup(name); err == nil && reg.Reads("interface") {
		s.Interface = cfg.Recv.Interface
		o.from(cfg, "recv.interface", "interface")
	}
	return o
}

// ports records wpg.toml's [port] addresses, which reach job as the site's
// Limits ("limits.src_ip"): a problem with one names its key and place,
// not --src-ip, a flag the user never gave.
func (o origins) ports(cfg *config.Config) {
	for _, k := range []string{"src_ip", "rx_src_ip"} {
		if cfg.Sources["port."+k] != "default" {
			o.from(cfg, "port."+k, "limits."+k)
		}
	}
}
