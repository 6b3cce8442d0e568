// Package config reads wpg.toml and records where every effective value came
// from (default, file:line, or a command-line flag). Decoding is strict:
// unknown keys and bad values are errors with file:line:column.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/wpg-dev/wpg/internal/printable"
	"github.com/wpg-dev/wpg/internal/suggest"
	"github.com/wpg-dev/wpg/units"
)

// Config holds every configuration value of wpg.
type Config struct {
	TX     TX
	Server Server
	DPDK   DPDK
	Port   Port
	Send   Send
	Recv   Recv
	// Sources maps each key ("tx.ring_bytes") to where its value came from:
	// "default", "FILE:LINE", "profile NAME, FILE:LINE" or a flag.
	Sources map[string]string
	// File is the configuration file read, "" when none.
	File string
	// Profile is the [profile.NAME] table applied over the file's keys
	// ("" = none); Profiles lists the file's profiles, sorted.
	Profile  string
	Profiles []string
}

// Send holds the [send] section: a lab box's defaults for wpg send, each
// taken where its flag is not given and the run reads it.
type Send struct {
	// Interface is the interface to send on (-i) for the backends that
	// send on one.
	Interface string
	// Backend is the data path (--backend).
	Backend string
	// Rate is the target rate (--rate), in pace.ParseRate's syntax, for a
	// run whose input keeps no schedule of its own.
	Rate string
	// Workers is the number of sender workers (--workers).
	Workers int64
	// PinCores pins worker i to the i-th CPU of this list (--pin-cores).
	PinCores string
}

// Recv holds the [recv] section: wpg recv's defaults.
type Recv struct {
	// Interface is the interface to receive on (-i).
	Interface string
}

// TX holds the [tx] section.
type TX struct {
	PrerenderMaxBytes   int64
	PrerenderMaxPackets int64
	RingBytes           int64
}

// DPDK holds the [dpdk] section (the dpdk backend, built with -tags dpdk).
type DPDK struct {
	// EALArgs are the EAL's arguments, separated by blanks
	// ("--no-huge -m 512 --vdev net_null0").
	EALArgs string
}

// Port holds the [port] section: the addresses and gateways of a port
// pair's ports (send --src-ip, --gateway, --rx-src-ip, --rx-gateway;
// docs/device.md).
type Port struct {
	SrcIP, Gateway, RxSrcIP, RxGateway string
}

// Server holds the [server] section.
type Server struct {
	PreviewMax   int64
	JobHistory   int64
	JobHistoryDB int64
	// Listen is the address `wpg serve` binds ("127.0.0.1:8080").
	Listen string
	// DB is the path of the job database ("" = the state directory's
	// wpg/jobs.db, chosen by the CLI). A relative path in a file is
	// relative to the file's directory.
	DB string
	// TokenFile is the path of a file holding the API token ("" = none).
	// A relative path in a file is relative to the file's directory.
	TokenFile string
	// JobFiles is the directory the files of `wpg serve`'s jobs must lie
	// in ("" = anywhere). A relative path in a file is relative to the
	// file's directory.
	JobFiles string
	// MaxJobs and MaxParses cap the jobs `wpg serve` runs and the
	// templates it parses at once.
	MaxJobs   int64
	MaxParses int64
}

// Default returns the built-in configuration.
func Default() *Config {
	c := &Config{Sources: map[string]string{}}
	for _, k := range Keys {
		if k.Text {
			*k.text(c) = k.DefaultText
		} else {
			*k.field(c) = k.Default
		}
		c.Sources[k.Name] = "default"
	}
	return c
}

// Get returns the value of the named integer key (false for a text key).
func (c *Config) Get(name string) (int64, bool) {
	for _, k := range Keys {
		if k.Name == name && !k.Text {
			return *k.field(c), true
		}
	}
	return 0, false
}

// GetText returns the value of the named text key (false for an integer key).
func (c *Config) GetText(name string) (string, bool) {
	for _, k := range Keys {
		if k.Name == name && k.Text {
			return *k.text(c), true
		}
	}
	return "", false
}

// SetText overrides a text key from a command-line flag.
func (c *Config) SetText(name, v, source string) error {
	for _, k := range Keys {
		if k.Name == name && k.Text {
			*k.text(c) = v
			c.Sources[name] = source
			return nil
		}
	}
	return fmt.Errorf("unknown text configuration key %q", name)
}

// Set overrides a key from a command-line flag.
func (c *Config) Set(name string, v int64, source string) error {
	for _, k := range Keys {
		if k.Name == name && !k.Text {
			if v < k.Min {
				return fmt.Errorf("%s: %d is below the minimum %d", source, v, k.Min)
			}
			*k.field(c) = v
			c.Sources[name] = source
			return nil
		}
	}
	return fmt.Errorf("unknown configuration key %q", name)
}

// Env is what Find takes from the process environment; the caller (the
// CLI) reads it, so that this package reads no environment itself.
type Env struct {
	WPGConfig     string // $WPG_CONFIG
	XDGConfigHome string // $XDG_CONFIG_HOME
	Home          string // the home directory ($HOME)
}

// Find returns the configuration file to read: explicit (from --config),
// else $WPG_CONFIG, else ./wpg.toml, else $XDG_CONFIG_HOME/wpg/wpg.toml
// (~/.config when unset), with the variables taken from env. It returns ""
// when none exists; an explicit path or $WPG_CONFIG that does not exist is
// an error.
func Find(explicit string, env Env) (string, error) {
	for _, c := range []struct{ path, what string }{{explicit, "--config"}, {env.WPGConfig, "$WPG_CONFIG"}} {
		if c.path == "" {
			continue
		}
		if _, err := os.Stat(c.path); err != nil {
			return "", fmt.Errorf("%s %s: %w (fix the path or remove the setting)", c.what, c.path, err)
		}
		return c.path, nil
	}
	if _, err := os.Stat("wpg.toml"); err == nil {
		return "wpg.toml", nil
	}
	dir := env.XDGConfigHome
	if dir == "" && env.Home != "" {
		dir = filepath.Join(env.Home, ".config")
	}
	if dir != "" {
		p := filepath.Join(dir, "wpg", "wpg.toml")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", nil
}

// Load finds and reads the configuration (see Find), over the defaults.
func Load(explicit string, env Env) (*Config, error) { return LoadProfile(explicit, "", env) }

// LoadProfile is Load with the [profile.NAME] table named profile applied
// over the file's keys ("" = none; ParseProfile).
func LoadProfile(explicit, profile string, env Env) (*Config, error) {
	path, err := Find(explicit, env)
	if err != nil {
		return nil, err
	}
	c := Default()
	if path == "" {
		if profile != "" {
			return nil, fmt.Errorf("--profile %s: no configuration file was found (--config, $WPG_CONFIG, ./wpg.toml, $XDG_CONFIG_HOME/wpg/wpg.toml), and profiles are its [profile.NAME] tables: write one, or leave out --profile", profile)
		}
		return c, nil
	}
	data, err := readConfig(path)
	if err != nil {
		return nil, err
	}
	if err := c.ParseProfile(path, data, profile); err != nil {
		return nil, err
	}
	return c, nil
}

// rawSections are the sections of wpg.toml as decoded, each value left
// for Parse to check (the TOML type, the range); the field of each key is
// found by its toml tags (values).
type rawSections struct {
	TX struct {
		PrerenderMaxBytes   any `toml:"prerender_max_bytes"`
		PrerenderMaxPackets any `toml:"prerender_max_packets"`
		RingBytes           any `toml:"ring_bytes"`
	} `toml:"tx"`
	Server struct {
		PreviewMax   any `toml:"preview_max"`
		JobHistory   any `toml:"job_history"`
		JobHistoryDB any `toml:"job_history_db"`
		Listen       any `toml:"listen"`
		DB           any `toml:"db"`
		TokenFile    any `toml:"token_file"`
		JobFiles     any `toml:"job_files"`
		MaxJobs      any `toml:"max_jobs"`
		MaxParses    any `toml:"max_parses"`
	} `toml:"server"`
	DPDK struct {
		EALArgs any `toml:"eal_args"`
	} `toml:"dpdk"`
	Port struct {
		SrcIP     any `toml:"src_ip"`
		Gateway   any `toml:"gateway"`
		RxSrcIP   any `toml:"rx_src_ip"`
		RxGateway any `toml:"rx_gateway"`
	} `toml:"port"`
	Send struct {
		Interface any `toml:"interface"`
		Backend   any `toml:"backend"`
		Rate      any `toml:"rate"`
		Workers   any `toml:"workers"`
		PinCores  any `toml:"pin_cores"`
	} `toml:"send"`
	Recv struct {
		Interface any `toml:"interface"`
	} `toml:"recv"`
}

// rawConfig is the whole document: the sections, and [profile.NAME]
// tables of the same sections.
type rawConfig struct {
	rawSections
	Profile map[string]rawSections `toml:"profile"`
}

// values maps each key given ("tx.ring_bytes") to its decoded value.
func (r *rawSections) values() map[string]any {
	out := map[string]any{}
	secs := reflect.ValueOf(r).Elem()
	for i := range secs.NumField() {
		sec, keys := secs.Type().Field(i).Tag.Get("toml"), secs.Field(i)
		for j := range keys.NumField() {
			if v := keys.Field(j).Interface(); v != nil {
				out[sec+"."+keys.Type().Field(j).Tag.Get("toml")] = v
			}
		}
	}
	return out
}

// Parse applies the TOML document data (named path in errors) over c:
// its keys outside [profile.NAME] tables.
func (c *Config) Parse(path string, data []byte) error { return c.ParseProfile(path, data, "") }

// ParseProfile is Parse, then the keys of the [profile.NAME] table named
// profile over the file's ("" = none). A profile the file does not define
// is an error that lists those it does.
func (c *Config) ParseProfile(path string, data []byte, profile string) error {
	var raw rawConfig
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return decodeError(path, data, err) // tomlerr.go
	}
	// The decoder matches names regardless of case ([Tx], Ring_Bytes);
	// TOML's keys are case-sensitive, and wpg's are lower case.
	if err := checkCase(path, data); err != nil {
		return err
	}
	c.File = path
	for name := range raw.Profile {
		c.Profiles = append(c.Profiles, name)
	}
	sort.Strings(c.Profiles)
	if err := c.apply(path, data, raw.values(), "", func(line int) string { return fmt.Sprintf("%s:%d", path, line) }); err != nil {
		return err
	}
	if _, ok := raw.Profile[profile]; profile != "" && !ok {
		return unknownProfile(path, profile, c.Profiles)
	}
	// Every profile is checked, the one chosen applied: a mistake in
	// another shows now, not on the day it is chosen.
	for _, name := range c.Profiles {
		dst := Default()
		if name == profile {
			dst, c.Profile = c, profile
		}
		prof := raw.Profile[name]
		if err := dst.apply(path, data, prof.values(), "profile."+name+".", func(line int) string {
			return fmt.Sprintf("profile %s, %s:%d", name, path, line)
		}); err != nil {
			return err
		}
	}
	return nil
}

// unknownProfile is the error for --profile NAME that path does not
// define, listing those it does.
func unknownProfile(path, name string, profiles []string) error {
	if len(profiles) == 0 {
		return fmt.Errorf("%s: --profile %s: the file defines no profiles: add a [profile.%s] table with the keys it changes (e.g. [profile.%s] then send.rate = \"1Mpps\"), or leave out --profile", path, name, name, name)
	}
	msg := fmt.Sprintf("%s: --profile %s: no such profile; the profiles are %s", path, name, strings.Join(profiles, ", "))
	if near := suggest.Closest(name, profiles); near != "" {
		msg += fmt.Sprintf(": did you mean %s?", near)
	}
	return errors.New(msg)
}

// apply sets the keys of vals (values) over c: the file's (prefix "") or
// a profile's (prefix "profile.NAME."), where a key's line is found by its
// full dotted name; source names where a value came from.
func (c *Config) apply(path string, data []byte, vals map[string]any, prefix string, source func(line int) string) error {
	for _, k := range Keys {
		v := vals[k.Name]
		if v == nil {
			continue
		}
		line, col := locate(data, prefix+k.Name)
		where := fmt.Sprintf("%s:%d:%d", path, line, col)
		if k.Text {
			str, ok := v.(string)
			if !ok {
				return fmt.Errorf("%s: %s%s: %v is not a string: want a quoted string, e.g. %s = %q", where, prefix, k.Name, v, k.Name[strings.LastIndex(k.Name, ".")+1:], textExample(k))
			}
			if k.Check != nil {
				if err := k.Check(str); err != nil {
					return fmt.Errorf("%s: %s%s: %v", where, prefix, k.Name, err)
				}
			}
			if k.Path && str != "" && !filepath.IsAbs(str) {
				str = filepath.Join(filepath.Dir(path), str)
			}
			*k.text(c) = str
			c.Sources[k.Name] = source(line)
			continue
		}
		n, err := toInt(v, k)
		if err != nil {
			return fmt.Errorf("%s: %s%s: %v", where, prefix, k.Name, err)
		}
		if n < k.Min {
			if k.Size {
				return fmt.Errorf("%s: %s%s = %s is below the minimum %s: use %q or more (default %q)", where, prefix, k.Name, units.FormatSize(n), units.FormatSize(k.Min), units.FormatSizeShort(k.Min), units.FormatSizeShort(k.Default))
			}
			return fmt.Errorf("%s: %s%s = %d is below the minimum %d: use a value ≥ %d (default %d)", where, prefix, k.Name, n, k.Min, k.Min, k.Default)
		}
		*k.field(c) = n
		c.Sources[k.Name] = source(line)
	}
	return nil
}

// Value formats the value of the named key as `wpg config` prints it.
func (c *Config) Value(k Key) string {
	if k.Text {
		return *k.text(c)
	}
	v := *k.field(c)
	if k.Size {
		return units.FormatSize(v)
	}
	return fmt.Sprint(v)
}

// toInt converts a decoded TOML value of key k to an integer. A wrong type
// is an error that says what the value is, what the key wants, and an
// example.
func toInt(v any, k Key) (int64, error) {
	name := k.Name[strings.LastIndex(k.Name, ".")+1:]
	want := fmt.Sprintf("want a whole number, e.g. %s = %d", name, k.Default)
	if k.Size {
		want = fmt.Sprintf("want a byte size: a whole number of bytes or a quoted size with a unit, e.g. %s = %d or %s = %q", name, k.Default, name, units.FormatSizeShort(k.Default))
	}
	var what string
	switch x := v.(type) {
	case int64:
		return x, nil
	case string:
		if k.Size {
			n, err := units.ParseSize(x)
			if err != nil {
				return 0, err
			}
			return n, nil
		}
		return 0, fmt.Errorf("%q is a string: write a whole number without quotes, e.g. %s = %d", x, name, k.Default)
	case float64:
		return 0, fmt.Errorf("%v is not a whole number: %s", x, want)
	case bool:
		what = fmt.Sprintf("%v is a boolean", x)
	case []any:
		what = "the value is an array"
	case map[string]any:
		what = "the value is a table"
	case toml.LocalDate, toml.LocalDateTime, toml.LocalTime, time.Time:
		what = fmt.Sprintf("%v is a date or time", x)
	default:
		what = fmt.Sprintf("%v is a %T", x, x)
	}
	return 0, fmt.Errorf("%s: %s", what, want)
}

// maxConfigBytes bounds a configuration file: wpg.toml holds a few dozen
// keys.
const maxConfigBytes = 1 << 20

// readConfig reads the configuration file at path: a regular file of at
// most maxConfigBytes (a FIFO would block the open, a device could be
// endless).
func readConfig(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read configuration: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("read configuration %s: %s, not a regular file: give the path of a wpg.toml file", path, printable.FileKind(st.Mode()))
	}
	if st.Size() > maxConfigBytes {
		return nil, fmt.Errorf("read configuration %s: %d bytes, more than the %d a configuration may have: is it the right file?", path, st.Size(), maxConfigBytes)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read configuration: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read configuration %s: %w", path, err)
	}
	if len(data) > maxConfigBytes {
		return nil, fmt.Errorf("read configuration %s: more than %d bytes: is it the right file?", path, maxConfigBytes)
	}
	return data, nil
}
