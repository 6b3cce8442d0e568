package config

import (
	"strings"
	"testing"
)

// A section name given a value, or written as an array of tables, is an
// error at its place that says how to write the section, not the decoder's
// mismatch with a Go struct type.
func TestParseSectionOfWrongType(t *testing.T) {
	cases := []struct{ doc, want string }{
		{"tx = 5\n", `wpg.toml:1:6: tx: 5 is a whole number, and tx is a section (a table): write [tx] on a line of its own and its keys below it, e.g. [tx] then prerender_max_bytes = "256MiB"`},
		{"\n  server =  \"x\"\n", `wpg.toml:2:13: server: "x" is a string, and server is a section (a table): write [server]`},
		{"dpdk = [1, 2]\n", "wpg.toml:1:8: dpdk: the value is an array, and dpdk is a section"},
		{"[tx]\nring_bytes = 4096\n[[server]]\npreview_max = 3\n", "wpg.toml:3:1: [[server]] makes server an array of tables, and server is one table: write [server] on a line of its own"},
	}
	for _, tc := range cases {
		err := Default().Parse("wpg.toml", []byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want it to contain %q", tc.doc, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), "rawConfig") || strings.Contains(err.Error(), "struct")) {
			t.Errorf("%q: the error shows Go's types: %v", tc.doc, err)
		}
	}
	// dotted keys and sections of the right type are still fine
	c := Default()
	if err := c.Parse("wpg.toml", []byte("tx.ring_bytes = \"1MiB\"\n[server]\npreview_max = 3\n")); err != nil || c.TX.RingBytes != 1<<20 || c.Server.PreviewMax != 3 {
		t.Fatalf("dotted key and a section: %v, %+v %+v", err, c.TX, c.Server)
	}
}

// TestReadConfigNotAFile: --config or $WPG_CONFIG naming a directory, a
// FIFO or a device says which it is ("d---------" before).
func TestReadConfigNotAFile(t *testing.T) {
	dir := t.TempDir()
	for path, want := range map[string]string{
		dir:         dir + ": a directory, not a regular file: give the path of a wpg.toml file",
		"/dev/null": "/dev/null: a character device, not a regular file",
	} {
		_, err := Load(path, Env{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%s): %v; want %q", path, err, want)
		}
	}
}

// TestTyposSayWhatToWrite: a misspelt or misplaced section or key names
// what it is near or where it belongs, and a known name in another case
// ([Tx], which the decoder took silently) is refused.
func TestTyposSayWhatToWrite(t *testing.T) {
	cases := []struct{ doc, want string }{
		{"[tx]\nring_byte = 5\n", `wpg.toml:2:1: unknown key "tx.ring_byte": did you mean tx.ring_bytes?`},
		{"tx.ring_byts = 5\n", `did you mean tx.ring_bytes?`},
		{"[txx]\nring_bytes = 1\n", "wpg.toml:1:2: unknown section [txx]: the sections are [tx], [server], [dpdk], [port], [send], [recv], [profile.NAME]: did you mean [tx]?"},
		{"[foo]\nx = 1\n", "unknown section [foo]: the sections are [tx], [server], [dpdk], [port]"},
		{"ring_bytes = \"16MiB\"\n", "wpg.toml:1:1: ring_bytes is a key of section [tx]: write it below a [tx] line"},
		{"[server]\nring_bytes = 1\n", "ring_bytes is a key of section [tx], not [server]: move it below the [tx] line"},
		{"[tx]\nring_bytes = 100\n", `wpg.toml:2:14: tx.ring_bytes = 100 B is below the minimum 4 KiB: use "4KiB" or more (default "16MiB")`},
		{"[server]\nfoo = 1\n", `unknown key "server.foo": the keys of [server] are preview_max, job_history`},
		{"[Tx]\nring_bytes = \"32MiB\"\n", "wpg.toml:1:2: section [Tx]: wpg.toml's names are lower case (TOML's are case-sensitive): write [tx]"},
		{"[tx]\nRing_Bytes = \"32MiB\"\n", "wpg.toml:2:1: key tx.Ring_Bytes: wpg.toml's names are lower case"},
	}
	for _, tc := range cases {
		c := Default()
		err := c.Parse("wpg.toml", []byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want it to contain %q", tc.doc, err, tc.want)
		}
		if c.TX.RingBytes != 16<<20 {
			t.Errorf("%q: ring_bytes %d taken from a refused file", tc.doc, c.TX.RingBytes)
		}
	}
}
