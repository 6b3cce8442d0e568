// Package units parses and prints the sizes and counts wpg reads from
// flags, templates and wpg.toml, with one rule everywhere:
//
//   - kB, KB, MB, GB, TB, PB are powers of 1000 (1 KB = 1000 bytes);
//   - KiB, MiB, GiB, TiB, PiB are powers of 1024 (1 KiB = 1024 bytes);
//   - a bare K, M, G, T, P (also Ki, Mi, …) is a power of 1024, as dd(1)
//     reads it;
//   - a trailing B is optional for the binary units and for plain bytes
//     ("4096", "4096B"); the prefix letter may be upper or lower case;
//   - a decimal fraction is allowed when the result is a whole number of
//     bytes (1.5KiB = 1536).
//
// Counts (ParseCount) take decimal prefixes only: k = 1000, M = 10^6,
// G = 10^9, T = 10^12. Rates (pps, bit/s) are decimal as well; package
// pace parses them.
//
// Parsing is bounded: input longer than MaxInputLen is refused, and a value
// beyond what the caller can hold is an error that names the largest one.
package units

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/wpg-dev/wpg/internal/inputerr"
)

// MaxInputLen is the longest size or count string accepted.
const MaxInputLen = 64

// MaxSize is the largest size ParseSize returns (8 EiB - 1).
const MaxSize = math.MaxInt64

// Binary and decimal multiples of a byte.
const (
	KiB int64 = 1 << 10
	MiB int64 = 1 << 20
	GiB int64 = 1 << 30
	TiB int64 = 1 << 40
	PiB int64 = 1 << 50

	KB int64 = 1e3
	MB int64 = 1e6
	GB int64 = 1e9
	TB int64 = 1e12
	PB int64 = 1e15
)

const sizeForms = "write a whole number of bytes or a number with a unit: 4096, 64KiB, 16MiB, 1GiB (powers of 1024; K, M, G too) or 1KB, 1MB, 1GB (powers of 1000)"

// ParseSize parses a byte size ("4096", "64KiB", "1.5 MiB", "16M", "1MB").
// See the package documentation for the units. The result is at least 0.
func ParseSize(s string) (int64, error) {
	return ParseSizeIn(s, 0, MaxSize)
}

// ParseSizeIn parses a byte size and checks that it lies in [lo, hi]; the
// error for a value outside names the range.
func ParseSizeIn(s string, lo, hi int64) (int64, error) {
	t := strings.TrimSpace(s)
	if len(t) > MaxInputLen {
		return 0, inputerr.Worded(nil, fmt.Sprintf("size %.20q… is %d characters long: %s", t, len(t), sizeForms), fmt.Sprintf("is %d characters long", len(t)), sizeForms)
	}
	num, unit := splitNumber(t)
	if num == "" {
		return 0, inputerr.Worded(nil, fmt.Sprintf("%q is not a size: %s", s, sizeForms), "is not a size", sizeForms)
	}
	mult, ok := sizeUnit(strings.TrimSpace(unit))
	if !ok {
		return 0, inputerr.Worded(nil, fmt.Sprintf("%q: unknown unit %q: %s", s, strings.TrimSpace(unit), sizeForms), fmt.Sprintf("has the unknown unit %q", strings.TrimSpace(unit)), sizeForms)
	}
	v, err := exact(num, mult)
	if err != nil {
		return 0, inputerr.Worded(nil, fmt.Sprintf("%q: %v: %s", s, err, sizeForms), err.Error(), sizeForms)
	}
	if !v.IsInt64() || v.Int64() > hi {
		return 0, inputerr.Worded(nil, fmt.Sprintf("size %q is too large: the largest is %s", s, describe(hi)), "is too large", "give at most "+describe(hi))
	}
	if n := v.Int64(); n < lo {
		return 0, inputerr.Worded(nil, fmt.Sprintf("size %q is too small: the smallest is %s", s, describe(lo)), "is too small", "give at least "+describe(lo))
	}
	return v.Int64(), nil
}

// ParseCount parses a count: a whole number, optionally with a decimal
// prefix k (1000), M (10^6), G (10^9) or T (10^12), e.g. "100000", "100k",
// "2.5M". Values above max are an error naming max.
func ParseCount(s string, max uint64) (uint64, error) {
	const forms = "write a whole number, or one with k, M, G or T (powers of 1000), e.g. 100000, 100k, 2.5M"
	t := strings.TrimSpace(s)
	if len(t) > MaxInputLen {
		return 0, fmt.Errorf("count %.20q… is %d characters long: %s", t, len(t), forms)
	}
	num, unit := splitNumber(t)
	if num == "" {
		return 0, fmt.Errorf("%q is not a count: %s", s, forms)
	}
	var mult int64
	switch strings.TrimSpace(unit) {
	case "":
		mult = 1
	case "k", "K":
		mult = 1e3
	case "M":
		mult = 1e6
	case "G":
		mult = 1e9
	case "T":
		mult = 1e12
	default:
		return 0, fmt.Errorf("%q: unknown suffix %q: %s", s, strings.TrimSpace(unit), forms)
	}
	v, err := exact(num, mult)
	if err != nil {
		return 0, fmt.Errorf("%q: %v: %s", s, err, forms)
	}
	if !v.IsUint64() || v.Uint64() > max {
		return 0, fmt.Errorf("count %q is too large: the largest is %d", s, max)
	}
	return v.Uint64(), nil
}

// splitNumber splits "1.5MiB" into "1.5" and "MiB". The number is digits
// with at most one decimal point and at least one digit; "" when there is
// none (a sign, an exponent or a hex number is not a number here).
func splitNumber(t string) (num, rest string) {
	i, digits, dot := 0, 0, false
	for ; i < len(t); i++ {
		c := t[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			if digits == 0 {
				return "", t
			}
			return t[:i], t[i:]
		}
	}
	if digits == 0 {
		return "", t
	}
	return t, ""
}

// exact returns num·mult, which must be a whole number.
func exact(num string, mult int64) (*big.Int, error) {
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return nil, fmt.Errorf("%q is not a number", num)
	}
	r.Mul(r, new(big.Rat).SetInt64(mult))
	if !r.IsInt() {
		return nil, fmt.Errorf("%s is not a whole number", r.FloatString(3))
	}
	return r.Num(), nil
}

// sizeUnit returns the multiplier of a size unit ("" and "B" are bytes).
func sizeUnit(u string) (int64, bool) {
	if u == "" || u == "B" {
		return 1, true
	}
	pow := strings.IndexByte("KMGTP", upper(u[0]))
	if pow < 0 {
		return 0, false
	}
	bin := []int64{KiB, MiB, GiB, TiB, PiB}[pow]
	dec := []int64{KB, MB, GB, TB, PB}[pow]
	switch u[1:] {
	case "", "i", "iB":
		return bin, true
	case "B":
		return dec, true
	}
	return 0, false
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// describe prints a limit as bytes and, where exact, with its unit.
func describe(n int64) string {
	if f := FormatSize(n); f != strconv.FormatInt(n, 10)+" B" {
		return f + " (" + strconv.FormatInt(n, 10) + " bytes)"
	}
	if n == 1 {
		return "1 byte"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// FormatSize prints a byte count exactly, with the largest unit that
// divides it: binary first ("16 MiB", "1 GiB"), then decimal ("1 MB",
// "1500 KB"), else bytes ("1000032 B"). ParseSize reads every result back,
// with or without the space.
func FormatSize(n int64) string {
	return formatSize(n, " ")
}

// FormatSizeShort is FormatSize without the space ("16MiB"), for tables and
// for values a user may paste into a flag.
func FormatSizeShort(n int64) string {
	return formatSize(n, "")
}

func formatSize(n int64, sep string) string {
	if n > 0 {
		for i, u := range []int64{PiB, TiB, GiB, MiB, KiB} {
			if n%u == 0 {
				return strconv.FormatInt(n/u, 10) + sep + []string{"PiB", "TiB", "GiB", "MiB", "KiB"}[i]
			}
		}
		for i, u := range []int64{PB, TB, GB, MB, KB} {
			if n%u == 0 {
				return strconv.FormatInt(n/u, 10) + sep + []string{"PB", "TB", "GB", "MB", "KB"}[i]
			}
		}
	}
	return strconv.FormatInt(n, 10) + sep + "B"
}

// FormatCount prints a count with sep between its groups of three digits
// (FormatCount(1234567, ",") is "1,234,567"), for tables people read.
func FormatCount(n uint64, sep string) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString(sep)
		}
		b.WriteRune(c)
	}
	return b.String()
}

// FormatSizeApprox prints a byte count rounded to one decimal in the largest
// binary unit it reaches ("1.5 GiB", "300.0 MiB", "512 B"), for messages
// where the order of magnitude matters more than the exact figure.
func FormatSizeApprox(n int64) string {
	for i, u := range []int64{PiB, TiB, GiB, MiB, KiB} {
		if n >= u {
			return fmt.Sprintf("%.1f %s", float64(n)/float64(u), []string{"PiB", "TiB", "GiB", "MiB", "KiB"}[i])
		}
	}
	return fmt.Sprintf("%d B", n)
}
