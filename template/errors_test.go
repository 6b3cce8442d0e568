package template

import (
	"errors"
	"strings"
	"testing"
)

// TestBadTemplates: every bad template gives one line with file:line:col,
// the field path, what is wrong and a fix.
func TestBadTemplates(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       string // the whole message starts with this
		fix        string // and contains this
	}{
		{"malformed yaml", "streams: [{ipv4: {}\n", "bad.wpg.yaml:1:", "fix the YAML syntax"},
		{"unknown top key", "stream:\n  - udp: {}\n", `bad.wpg.yaml:1:1: stream: unknown key "stream" in the top level`, `did you mean "streams"?`},
		{"unknown layer", "streams:\n  - ipv4: {}\n    udpp: {}\n", `bad.wpg.yaml:3:5: streams[0].udpp: unknown key or layer "udpp" in streams[0]`, `did you mean "udp"?`},
		{"unknown field", "streams:\n  - ipv4: {}\n    udp: {sport: 1}\n", `bad.wpg.yaml:3:11: streams[0].udp.sport: unknown key "sport" in streams[0].udp`, "valid keys are src, dst"},
		{"port out of range", "streams:\n  - ipv4: {}\n    udp: {src: 70000}\n", `bad.wpg.yaml:3:16: streams[0].udp.src: port 70000 is out of range`, "use a value in 0..65535"},
		{"port range out of range", "streams:\n  - ipv4: {}\n    udp: {dst: {from: 1, to: 65536}}\n", `bad.wpg.yaml:3:30: streams[0].udp.dst.to: port 65536 is out of range`, "0..65535"},
		{"ipv6 in ipv4", "streams:\n  - name: x\n    ipv4:\n      src: 2001:db8::1\n    udp: {}\n", `bad.wpg.yaml:4:12: streams[0].ipv4.src: "2001:db8::1" is an IPv6 address in an IPv4 field`, "use an IPv4 address such as 198.18.0.1"},
		{"ipv4 in ipv6", "streams:\n  - ipv6: {dst: 198.18.0.1}\n    udp: {}\n", `bad.wpg.yaml:2:17: streams[0].ipv6.dst: "198.18.0.1" is an IPv4 address in an IPv6 field`, "2001:2::1"},
		{"bad ipv4", "streams:\n  - ipv4: {dst: 198.18.0.300}\n", `bad.wpg.yaml:2:17: streams[0].ipv4.dst: "198.18.0.300" is not an IPv4 address`, "dotted decimal"},
		{"size below headers", "streams:\n  - size: 60\n    ipv4: {}\n    udp: {}\n", `bad.wpg.yaml:2:11: streams[0].size: frame size 60 is below the 62 bytes this stream needs (42 of headers + 20 of signature)`, "signature: false (then 42)"},
		{"imix below vlan tcp", "streams:\n  - size: imix\n    vlan: {id: 5}\n    ipv4: {}\n    tcp: {}\n", `bad.wpg.yaml:2:11: streams[0].size: size: imix (7 × 64, 4 × 594, 1 × 1514) has frames of 64 bytes, below the 78 bytes`, "custom IMIX whose sizes are all at least 78, e.g. size: {imix: {78: 7, 594: 4, 1518: 1}}"},
		{"custom imix below vlan", "streams:\n  - size: {imix: {64: 7, 1514: 1}}\n    vlan: {id: 5}\n    ipv4: {}\n    udp: {}\n", `bad.wpg.yaml:2:11: streams[0].size: the smallest IMIX size, 64, is below the 66 bytes`, "size: {imix: {66: 7, 1518: 1}}"},
		{"increment from above to", "streams:\n  - ipv4: {}\n    udp: {src: {from: 2000, to: 1000, mode: increment}}\n", "bad.wpg.yaml:3:23: streams[0].udp.src.from: mode: increment counts up from `from` to `to`, but from 2000 is above to 1000", "swap them ({from: 1000, to: 2000}) to count up, or use mode: decrement"},
		{"increment address from above to", "streams:\n  - ipv4: {src: {from: 198.18.0.9, to: 198.18.0.1, mode: increment}}\n", "bad.wpg.yaml:2:24: streams[0].ipv4.src.from: mode: increment counts up from `from` to `to`, but from 198.18.0.9 is above to 198.18.0.1", "{from: 198.18.0.1, to: 198.18.0.9}"},
		{"increment size from above to", "streams:\n  - size: {from: 128, to: 64, mode: increment}\n", "bad.wpg.yaml:2:18: streams[0].size.from: mode: increment counts up", "{from: 64, to: 128}"},
		{"increment vlan id from above to", "streams:\n  - vlan: {id: {from: 20, to: 10, mode: increment, step: 2}}\n", "bad.wpg.yaml:2:23: streams[0].vlan.id.from: mode: increment counts up", "mode: decrement"},
		{"pattern longer than the frame", "streams:\n  - size: 64\n    ipv4: {}\n    udp: {dst: 53}\n    payload: {pattern: \"123401000001000000000000076578616d706c6503636f6d0000010001\"}\n", "bad.wpg.yaml:5:24: streams[0].payload.pattern: the 29-byte payload pattern does not fit in the 2 payload bytes of a 64-byte frame (42 of headers + 20 of signature)", "use a size of at least 91 (or remove size: to size the frame from the payload)"},
		{"text longer than the smallest frame", "streams:\n  - size: [64, 128]\n    ipv4: {}\n    udp: {}\n    payload: {text: \"GET / HTTP/1.1\"}\n", "bad.wpg.yaml:5:21: streams[0].payload.text: the 14-byte payload text does not fit in the 2 payload bytes of the smallest frame (64 bytes)", "use a size of at least 76"},
		{"pattern longer than a jumbo frame", "streams:\n  - ipv4: {}\n    payload: {text: \"" + strings.Repeat("x", 9200) + "\"}\n", "bad.wpg.yaml:3:21: streams[0].payload.text: the 9200-byte payload text needs a frame of 9254 bytes, above the largest frame size 9216", "at most 9162 bytes"},
		{"tab indentation", "streams:\n\t- ipv4: {}\n", `bad.wpg.yaml:2:1: a tab in the indentation: found character '\t'`, "indent with spaces, not tabs"},
		{"too many streams", "streams:\n" + strings.Repeat("  - {}\n", 65536), `bad.wpg.yaml:2:3: streams: 65536 streams`, "at most 65535 streams"},
		{"nesting too deep", "streams: " + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "\n", `bad.wpg.yaml:1:73: lists and mappings nested more than 64 deep`, "check the brackets"},
		{"block nesting too deep", "streams:\n" + strings.Repeat("- ", 100) + "1\n", `bad.wpg.yaml:2:`, "about 6 levels"},
		{"too many items", "streams: [{size: [" + strings.Repeat("64,", 2_000_000) + "64]}]\n", `bad.wpg.yaml:1:`, "the limit is fixed"},
		{"alias expansion", "streams:\n  - {size: &big [" + strings.Repeat("64,", 100_000) + "64], ipv4: {}}\n" + strings.Repeat("  - {size: *big, ipv4: {}}\n", 50), `bad.wpg.yaml:`, "fewer aliases"},
		{"bad mac", "streams:\n  - ethernet: {src: \"02:00:00:00:00\"}\n", `bad.wpg.yaml:2:21: streams[0].ethernet.src: "02:00:00:00:00" is not a MAC address`, "six hex bytes"},
		{"bad imix weights", "streams:\n  - size: {imix: {64: 0, 1518: 0}}\n    ipv4: {}\n", `bad.wpg.yaml:2:18: streams[0].size.imix: all imix weights are 0`, "weight of 1 or more"},
		{"negative imix weight", "streams:\n  - size: {imix: {64: -1}}\n", `bad.wpg.yaml:2:23: streams[0].size.imix.64: IMIX weight -1 is negative`, ""},
		{"count negative", "streams:\n  - count: -5\n    ipv4: {}\n", `bad.wpg.yaml:2:12: streams[0].count: count -5 is negative`, "use a value in 0.."},
		{"share zero", "streams:\n  - share: 0\n", `bad.wpg.yaml:2:12: streams[0].share: share 0 would never send the stream`, "share: 1 or more"},
		{"udp without ip", "streams:\n  - udp: {}\n", `bad.wpg.yaml:2:5: streams[0].udp: udp needs an IP layer`, "add ipv4: {} or ipv6: {}"},
		{"icmp with ipv6", "streams:\n  - ipv6: {}\n    icmp: {}\n", `bad.wpg.yaml:3:5: streams[0].icmp: icmp (ICMPv4) needs an ipv4 layer`, "use icmpv6"},
		{"two l3", "streams:\n  - ipv4: {}\n    ipv6: {}\n", `bad.wpg.yaml:2:5: streams[0]: a stream has at most one of ipv4, ipv6 and arp`, "split"},
		{"vlan id range", "streams:\n  - vlan: {id: 4095}\n", `bad.wpg.yaml:2:16: streams[0].vlan.id: VLAN id 4095 is out of range`, "0..4094"},
		{"no streams", "seed: 1\n", `bad.wpg.yaml:1:1: streams: no streams`, "add a `streams:` list"},
		{"empty file", "", `bad.wpg.yaml:1:1: empty template`, "streams"},
		{"key without value", "streams:\n  - ipv4: {}\n    udp:\n", `bad.wpg.yaml:3:5: streams[0].udp: key without a value`, "udp: {}"},
		{"bad mode", "streams:\n  - ipv4: {ttl: {from: 1, to: 9, mode: up}}\n", `bad.wpg.yaml:2:40: streams[0].ipv4.ttl.mode: unknown mode "up"`, "increment, decrement or random"},
		{"range missing to", "streams:\n  - ipv4: {ttl: {from: 1}}\n", `bad.wpg.yaml:2:17: streams[0].ipv4.ttl: a varying 8-bit value needs both from and to`, ""},
		{"unknown range key", "streams:\n  - ipv4: {ttl: {from: 1, too: 9}}\n", `bad.wpg.yaml:2:27: streams[0].ipv4.ttl.too: unknown key "too"`, `did you mean "to"?`},
		{"ipv6 range upper bits", "streams:\n  - ipv6: {src: {from: \"2001:2::1\", to: \"2001:3::1\"}}\n", `bad.wpg.yaml:2:41: streams[0].ipv6.src.to: IPv6 ranges may vary only the lower 64 bits`, "first four groups"},
		{"unknown tcp flag", "streams:\n  - ipv4: {}\n    tcp: {flags: [syn, fyn]}\n", `bad.wpg.yaml:3:24: streams[0].tcp.flags[1]: unknown TCP flag "fyn"`, "fin, syn"},
		{"bad boolean", "streams:\n  - signature: maybe\n", `bad.wpg.yaml:2:16: streams[0].signature: "maybe" is not a boolean`, "true or false"},
		{"duplicate key", "streams:\n  - ipv4: {}\n    ipv4: {}\n", `bad.wpg.yaml:3:5:`, "remove one"},
		{"payload field beyond frame", "streams:\n  - size: 64\n    ipv4: {}\n    udp: {}\n    payload: {fields: [{offset: 1, width: 2, value: 1}]}\n", `bad.wpg.yaml:5:33: streams[0].payload.fields[0].offset: payload field at offset 1 (width 2) ends beyond the 2 payload bytes`, "raise the frame size"},
		{"frame too large", "streams:\n  - size: 10000\n", `bad.wpg.yaml:2:11: streams[0].size: frame size 10000 is out of range; use a frame size of at most 9216 bytes (jumbo), e.g. 64`, ""},
		// Not "use a value in 0..9216": 0 is no frame size (the one below the
		// stream's own minimum has its error, naming the minimum).
		{"frame size negative", "streams:\n  - size: -5\n", `bad.wpg.yaml:2:11: streams[0].size: frame size -5 is negative; use a frame size of at most 9216 bytes`, ""},
		{"frame size range too large", "streams:\n  - size: {from: 100, to: 20000}\n", `bad.wpg.yaml:2:27: streams[0].size.to: frame size 20000 is out of range; use a frame size of at most 9216 bytes`, ""},
		{"stream not a mapping", "streams:\n  - 5\n", `bad.wpg.yaml:2:5: streams[0]: expected a mapping`, ""},
		{"signed frame below ethernet minimum", "streams:\n  - size: 50\n    payload: {text: x}\n", `bad.wpg.yaml:2:11: streams[0].size: frame size 50 is below the Ethernet minimum of 60 bytes`, "signature: false"},
		{"name not a scalar", "streams:\n  - name: [a, b]\n", `bad.wpg.yaml:2:11: streams[0].name: expected a name here, found sequence`, "single value"},
		{"two documents", "streams: []\n---\nstreams: []\n", `bad.wpg.yaml:1:1: 2 YAML documents`, "remove the extra ---"},
		// #23 item 13: an alias of no anchor, deep in a value, was read as
		// the scalar "*" ("* is not a IMIX weight"); go-yaml refuses it.
		{"undefined alias three levels deep", "streams:\n  - size: {imix: {64: *undef}}\n    ipv4: {}\n", `bad.wpg.yaml:2:24: could not find alias "undef"`, "fix the YAML syntax"},
		{"undefined alias in a list", "streams: [{ipv4: {src: [198.18.0.1, *a]}, udp: {}}]\n", `bad.wpg.yaml:1:38: could not find alias "a"`, "fix the YAML syntax"},
		// YAML reads an unquoted IPv6 or MAC address in a list inside a
		// flow mapping as a mapping of its first group to the rest.
		{"ipv6 address in a flow list in a flow mapping", "streams:\n  - ipv6: {src: [2001:2::1, 2001:2::2]}\n    udp: {}\n", `bad.wpg.yaml:2:18: streams[0].ipv6.src[0]: YAML reads 2001:2::1 in a list inside a flow mapping ({...}) as the mapping {2001: 2::1}, not as an address`, `quote the address: "2001:2::1"`},
		{"link-local address in a flow list in a flow mapping", "streams: [{ipv6: {dst: [\"2001:2::1\", fe80::1]}, udp: {}}]\n", `bad.wpg.yaml:1:38: streams[0].ipv6.dst[1]: YAML reads fe80::1 in a list inside a flow mapping ({...}) as the mapping {fe80: :1}, not as an address`, `quote the address: "fe80::1"`},
		{"mac address in a flow list in a flow mapping", "streams:\n  - ethernet: {src: [02:00:00:00:00:01, 02:00:00:00:00:02]}\n", `bad.wpg.yaml:2:22: streams[0].ethernet.src[0]: YAML reads 02:00:00:00:00:01 in a list inside a flow mapping ({...}) as the mapping {02: 00:00:00:00:01}, not as an address`, `quote the address: "02:00:00:00:00:01"`},
		{"mapping that is no address", "streams:\n  - ipv6: {src: [2001:zz]}\n", `bad.wpg.yaml:2:18: streams[0].ipv6.src[0]: expected a single IPv6 address here, found mapping`, "write a value such as 2001:2::1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("bad.wpg.yaml", []byte(c.yaml))
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			if !strings.HasPrefix(msg, c.want) {
				t.Errorf("error\n  %s\nwant prefix\n  %s", msg, c.want)
			}
			if !strings.Contains(msg, c.fix) {
				t.Errorf("error\n  %s\nhas no fix %q", msg, c.fix)
			}
			var te *Error
			if !errors.As(err, &te) || te.Line == 0 {
				t.Errorf("not a positioned *Error: %#v", err)
			}
		})
	}
}
