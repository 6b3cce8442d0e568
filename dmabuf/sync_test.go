package dmabuf

import (
	"errors"
	"testing"
)

func TestSyncCommandEncoding(t *testing.T) {
	for _, c := range []struct {
		cmd  SyncCommand
		want uint64
	}{
		{SyncCommand{Offset: 0, Size: 4096, Dir: Bidirectional}, 0x1001},
		{SyncCommand{Offset: 0x2000, Size: 0x100, Dir: ToDevice}, 0x00002000_00000105},
		{SyncCommand{Offset: 0x10, Size: 1, Dir: FromDevice}, 0x00000010_00000019}, // size rounded up to 16
		{SyncCommand{Offset: 0xFFFFFFFF, Size: 0xFFFFFFF0, Dir: ToDevice}, 0xFFFFFFFF_FFFFFFF5},
	} {
		got, err := c.cmd.Encode()
		if err != nil || got != c.want {
			t.Errorf("%+v: %#x, %v; want %#x", c.cmd, got, err, c.want)
			continue
		}
		back, ok := DecodeSyncCommand(got)
		if !ok || back.Offset != c.cmd.Offset || back.Dir != c.cmd.Dir || back.Size != (c.cmd.Size+15)&^15 {
			t.Errorf("decode %#x = %+v, %v", got, back, ok)
		}
	}
	for _, bad := range []SyncCommand{{Offset: 1 << 32, Size: 16}, {Size: 0}, {Size: 0xFFFFFFF1}, {Size: 16, Dir: 3}} {
		if _, err := bad.Encode(); err == nil {
			t.Errorf("%+v encoded", bad)
		}
	}
	if _, ok := DecodeSyncCommand(1); ok {
		t.Error("the plain form 1 decoded as a packed command")
	}
	if _, ok := DecodeSyncCommand(0); ok {
		t.Error("0 decoded as a command")
	}
}

func TestCacheModeTable(t *testing.T) {
	want := map[bool][8]string{
		false: {"cached", "cached", "cached", "cached", "cached", "non-cached", "write-combine", "dma-coherent"},
		true:  {"cached", "non-cached", "write-combine", "dma-coherent", "cached", "non-cached", "write-combine", "dma-coherent"},
	}
	for osync, row := range want {
		for m, w := range row {
			if got := CacheMode(m, osync); got != w {
				t.Errorf("CacheMode(%d, O_SYNC %v) = %s, want %s", m, osync, got, w)
			}
		}
	}
	for _, m := range []int{-1, 8, 255} {
		if err := CheckSyncMode(m); !errors.Is(err, ErrSyncMode) {
			t.Errorf("sync_mode %d: %v", m, err)
		}
	}
}

func TestCheckPassCountsBadBytes(t *testing.T) {
	buf := make([]byte, 1000)
	if bad := CheckPass(buf); bad != 0 {
		t.Fatalf("%d bad bytes on sound memory", bad)
	}
	if buf[255] != 255 || buf[256] != 0 || buf[999] != byte(999-768) {
		t.Errorf("ramp not per 256-byte block: %d %d %d", buf[255], buf[256], buf[999])
	}
	ClearPass(buf)
	for _, b := range buf {
		if b != 0 {
			t.Fatal("clear_buf left data")
		}
	}
}
