package config

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/wpg-dev/wpg/internal/suggest"
	"github.com/wpg-dev/wpg/units"
)

// decodeError says where and why the strict decoding of the document at
// path refused it, in wpg.toml's words: a section given a value, an
// unknown key (with the one it is near), a number too large, a syntax
// error, each at its file:line:col.
func decodeError(path string, data []byte, err error) error {
	// A section given a value fails the strict decoding too; say it
	// in wpg.toml's words (the document is parsed again only then).
	if serr := checkSections(path, data); serr != nil {
		return serr
	}
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		e := strict.Errors[0]
		row, col := e.Position()
		return fmt.Errorf("%s:%d:%d: %s", path, row, col, unknownKey(e.Key()))
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		if strings.Contains(de.Error(), "too large to fit") {
			where := fmt.Sprintf("%s:%d:%d", path, row, col)
			if len(de.Key()) > 0 {
				where += ": " + strings.Join(de.Key(), ".") // the key, as every other value's error names it
			}
			return fmt.Errorf("%s: %s: the largest number a key takes is %d; sizes can be written with a unit, e.g. \"16MiB\"", where, de.Error(), int64(math.MaxInt64))
		}
		if msg := de.Error(); strings.Contains(msg, "already exists") || strings.Contains(msg, "already defined") {
			return fmt.Errorf("%s:%d:%d: %s: TOML takes each [section] and each key once: put the keys of both under the first, and delete the repeated line (a section written as dotted keys, send.rate = …, counts as given)", path, row, col, msg)
		}
		return fmt.Errorf("%s:%d:%d: %s: fix the TOML syntax (key = value, [section])", path, row, col, de.Error())
	}
	return fmt.Errorf("%s: %w", path, err)
}

// sections are the tables of wpg.toml (the part of each key before its dot).
func sections() []string {
	var out []string
	for _, k := range Keys {
		if s := k.Name[:strings.Index(k.Name, ".")]; !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// checkSections refuses a section name given a value (`tx = 5`) or made an
// array of tables (`[[tx]]`), naming where and how to write the section;
// the strict decoding would report it as a mismatch with a Go struct type.
// A document that does not parse is left to the strict decoding, which
// says where the syntax is wrong.
func checkSections(path string, data []byte) error {
	var top map[string]any
	if toml.Unmarshal(data, &top) != nil {
		return nil
	}
	if err := checkSectionsIn(path, data, top, ""); err != nil {
		return err
	}
	v, ok := top["profile"]
	if !ok {
		return nil
	}
	const example = "[profile.NAME] on a line of its own and below it the keys the profile changes, e.g. [profile.lab] then send.rate = \"1Mpps\""
	profs, ok := v.(map[string]any)
	if !ok {
		line, col := locate(data, "profile")
		return fmt.Errorf("%s:%d:%d: profile: %s, and profile holds tables, one per profile: write %s", path, line, col, describe(v), example)
	}
	for _, name := range slices.Sorted(maps.Keys(profs)) {
		prof, ok := profs[name].(map[string]any)
		if !ok {
			line, col := locate(data, "profile."+name)
			return fmt.Errorf("%s:%d:%d: profile.%s: %s, and a profile is a table: write %s", path, line, col, name, describe(profs[name]), example)
		}
		if err := checkSectionsIn(path, data, prof, "profile."+name+"."); err != nil {
			return err
		}
	}
	return nil
}

// checkSectionsIn is checkSections for the sections of one table: the
// document's (prefix "") or a profile's (prefix "profile.NAME.").
func checkSectionsIn(path string, data []byte, top map[string]any, prefix string) error {
	for _, sec := range sections() {
		v, ok := top[sec]
		if !ok {
			continue
		}
		if _, ok := v.(map[string]any); ok {
			continue
		}
		name := prefix + sec
		example := fmt.Sprintf("[%s] on a line of its own and its keys below it, e.g. [%s] then %s", name, name, keyExample(sec))
		for n, l := range scanLines(data) {
			if l.array && l.name == name {
				return fmt.Errorf("%s:%d:%d: [[%s]] makes %s an array of tables, and %s is one table: write %s", path, n+1, l.start, name, name, name, example)
			}
		}
		line, col := locate(data, name)
		return fmt.Errorf("%s:%d:%d: %s: %s, and %s is a section (a table): write %s", path, line, col, name, describe(v), name, example)
	}
	return nil
}

// unknownKey says what is wrong with the key the strict decoding did not
// know (its path: ["txx"], ["tx", "ring_byte"]) and what to write: the
// section or key it is near, the section a bare key belongs in.
func unknownKey(key []string) string {
	if len(key) > 2 && key[0] == "profile" {
		return fmt.Sprintf("in [profile.%s]: %s", key[1], unknownKeyIn(key[2:], false))
	}
	return unknownKeyIn(key, true)
}

// unknownKeyIn is unknownKey for a key of the document (top) or of a
// profile (!top: a profile has no profiles).
func unknownKeyIn(key []string, top bool) string {
	secs := sections()
	list := func() string {
		names := make([]string, len(secs))
		for i, s := range secs {
			names[i] = "[" + s + "]"
		}
		if top {
			names = append(names, "[profile.NAME]")
		}
		return strings.Join(names, ", ")
	}
	dotted := strings.Join(key, ".")
	if len(key) == 0 {
		return "unknown key: valid keys are " + strings.Join(keyNames(), ", ")
	}
	if !slices.Contains(secs, key[0]) {
		if len(key) == 1 {
			// A key of a section written above every section header.
			for _, k := range Keys {
				if sec, leaf, _ := strings.Cut(k.Name, "."); leaf == key[0] {
					return fmt.Sprintf("%s is a key of section [%s]: write it below a [%s] line (or as %s = …)", key[0], sec, sec, k.Name)
				}
			}
		}
		msg := fmt.Sprintf("unknown section [%s]: the sections are %s", key[0], list())
		if near := suggest.Closest(key[0], secs); near != "" {
			msg += fmt.Sprintf(": did you mean [%s]?", near)
		}
		return msg
	}
	sec := key[0]
	var inSec []string
	for _, k := range Keys {
		if strings.HasPrefix(k.Name, sec+".") {
			inSec = append(inSec, k.Name[len(sec)+1:])
		}
	}
	leaf := strings.Join(key[1:], ".")
	if near := suggest.Closest(leaf, inSec); near != "" {
		return fmt.Sprintf("unknown key %q: did you mean %s.%s? (the keys of [%s]: %s)", dotted, sec, near, sec, strings.Join(inSec, ", "))
	}
	for _, k := range Keys {
		if other, l, _ := strings.Cut(k.Name, "."); l == leaf && other != sec {
			return fmt.Sprintf("unknown key %q: %s is a key of section [%s], not [%s]: move it below the [%s] line", dotted, leaf, other, sec, other)
		}
	}
	return fmt.Sprintf("unknown key %q: the keys of [%s] are %s", dotted, sec, strings.Join(inSec, ", "))
}

// checkCase refuses a section or key that is a known one in another case
// ([Tx], Ring_Bytes), which the decoder would take silently.
func checkCase(path string, data []byte) error {
	var top map[string]any
	if toml.Unmarshal(data, &top) != nil {
		return nil
	}
	return checkCaseIn(path, data, top, "")
}

// checkCaseIn is checkCase for the sections of one table: the document's
// (prefix "") or a profile's (prefix "profile.NAME.").
func checkCaseIn(path string, data []byte, top map[string]any, prefix string) error {
	known := keyNames()
	for _, sec := range slices.Sorted(maps.Keys(top)) {
		v := top[sec]
		if prefix == "" && sec == "profile" {
			profs, _ := v.(map[string]any)
			for _, name := range slices.Sorted(maps.Keys(profs)) {
				prof, _ := profs[name].(map[string]any)
				if err := checkCaseIn(path, data, prof, "profile."+name+"."); err != nil {
					return err
				}
			}
			continue
		}
		if !slices.Contains(sections(), sec) {
			line, col := findName(data, sec)
			return fmt.Errorf("%s:%d:%d: section [%s%s]: wpg.toml's names are lower case (TOML's are case-sensitive): write [%s%s]", path, line, col, prefix, sec, prefix, strings.ToLower(sec))
		}
		m, _ := v.(map[string]any)
		for _, key := range slices.Sorted(maps.Keys(m)) {
			if !slices.Contains(known, sec+"."+key) {
				line, col := findName(data, key)
				return fmt.Errorf("%s:%d:%d: key %s%s.%s: wpg.toml's names are lower case (TOML's are case-sensitive): write %s", path, line, col, prefix, sec, key, strings.ToLower(key))
			}
		}
	}
	return nil
}

// findName is where name first stands as a section header or a key
// (1-based; 1:1 when not found).
func findName(data []byte, name string) (int, int) {
	re := regexp.MustCompile(`^\s*(\[\s*)?(` + regexp.QuoteMeta(name) + `)\s*(\]|=|\.)`)
	for n, l := range strings.Split(string(data), "\n") {
		if m := re.FindStringSubmatchIndex(l); m != nil {
			return n + 1, m[4] + 1
		}
	}
	return 1, 1
}

// keyExample is the first key of section sec with its default, as a line
// of wpg.toml.
func keyExample(sec string) string {
	for _, k := range Keys {
		if !strings.HasPrefix(k.Name, sec+".") {
			continue
		}
		name := k.Name[len(sec)+1:]
		switch {
		case k.Text:
			return fmt.Sprintf("%s = %q", name, textExample(k))
		case k.Size:
			return fmt.Sprintf("%s = %q", name, units.FormatSizeShort(k.Default))
		}
		return fmt.Sprintf("%s = %d", name, k.Default)
	}
	return "key = value"
}

// describe says what a decoded TOML value is ("5 is a whole number").
func describe(v any) string {
	switch x := v.(type) {
	case int64:
		return fmt.Sprintf("%d is a whole number", x)
	case float64:
		return fmt.Sprintf("%v is a number", x)
	case string:
		return fmt.Sprintf("%q is a string", x)
	case bool:
		return fmt.Sprintf("%v is a boolean", x)
	case []any:
		return "the value is an array"
	case toml.LocalDate, toml.LocalDateTime, toml.LocalTime, time.Time:
		return fmt.Sprintf("%v is a date or time", x)
	}
	return fmt.Sprintf("%v is a %T", v, v)
}

// locate finds the line and column of the value of the key whose full
// dotted name is dotted ("tx.ring_bytes", "profile.lab.send.rate"),
// however the document spells it: below a [tx] or [profile.lab] header,
// or dotted (1-based; 1:1 when not found).
func locate(data []byte, dotted string) (int, int) {
	for n, l := range scanLines(data) {
		if !l.table && l.name == dotted {
			return n + 1, l.value
		}
	}
	return 1, 1
}

// tomlLine is what scanLines sees of one line of a TOML document.
type tomlLine struct {
	// table is true for a [table] header, array also for [[table]].
	table, array bool
	// name is the header's dotted name, or the full dotted name of the
	// key set on the line (its table's name, a dot, the key); "" for
	// other lines.
	name string
	// start is the 1-based column where the line's text starts, value
	// where a key's value starts.
	start, value int
}

var (
	tomlName   = `(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*`
	tomlHeader = regexp.MustCompile(`^\s*(\[\[?)\s*(` + tomlName + `)\s*\]`)
	tomlKey    = regexp.MustCompile(`^\s*(` + tomlName + `)\s*=\s*`)
)

// scanLines reads each line of a TOML document as a header, a key, or
// neither, naming keys by their full dotted names. It is what locate and
// the checks need of positions, not a parser: a line inside a multi-line
// string may look like a key.
func scanLines(data []byte) []tomlLine {
	lines := strings.Split(string(data), "\n")
	out := make([]tomlLine, len(lines))
	table := ""
	for n, line := range lines {
		start := len(line) - len(strings.TrimLeft(line, " \t")) + 1
		if m := tomlHeader.FindStringSubmatchIndex(line); m != nil {
			table = dottedName(line[m[4]:m[5]])
			out[n] = tomlLine{table: true, array: line[m[2]:m[3]] == "[[", name: table, start: start}
			continue
		}
		if m := tomlKey.FindStringSubmatchIndex(line); m != nil {
			name := dottedName(line[m[2]:m[3]])
			if table != "" {
				name = table + "." + name
			}
			out[n] = tomlLine{name: name, start: start, value: m[1] + 1}
		}
	}
	return out
}

// dottedName writes a TOML key or header name without blanks around its
// dots and without quotes.
func dottedName(s string) string {
	parts := strings.Split(s, ".")
	for i, p := range parts {
		parts[i] = strings.Trim(strings.TrimSpace(p), `"'`)
	}
	return strings.Join(parts, ".")
}
