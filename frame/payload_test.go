package frame

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

func renderOne(t testing.TB, s *PayloadSource) []byte {
	t.Helper()
	buf := [][]byte{make([]byte, s.MaxFrame())}
	lens := []int{0}
	if n := s.Render(buf, lens, 12345); n != 1 {
		t.Fatalf("Render = %d, want 1", n)
	}
	return buf[0][:lens[0]]
}

func TestPayloadChecksumMatchesFullCRC(t *testing.T) {
	for _, fill := range []string{FillPattern, FillRandom} {
		for _, size := range []int{64, 65, 100, 4095, 4096, 4104, 4111, 4112, 8200, 65536, 65537, 460800, 1<<20 + 13} {
			s, err := NewPayloadSource(PayloadConfig{Size: size, Fill: fill, Seed: 7}, 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 3; i++ {
				b := renderOne(t, s)
				want := crc32.Checksum(b[PayloadHeaderLen:], castagnoli)
				if got := binary.LittleEndian.Uint32(b[28:]); got != want {
					t.Fatalf("fill %s size %d frame %d: header checksum %08x, CRC-32C of payload %08x", fill, size, i, got, want)
				}
				sig, ok, corrupt := DecodePayload(b)
				if !ok || corrupt || sig.Seq != uint64(i) || sig.TxNs != 12345 {
					t.Fatalf("size %d: DecodePayload = %+v ok=%v corrupt=%v", size, sig, ok, corrupt)
				}
			}
		}
	}
}

func TestPayloadDetectsStaleAndDamaged(t *testing.T) {
	s, err := NewPayloadSource(PayloadConfig{Size: 460800}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	f0 := append([]byte(nil), renderOne(t, s)...)
	f1 := renderOne(t, s)
	// A page of the previous frame left in the middle (stale/torn read).
	torn := append([]byte(nil), f1...)
	copy(torn[PayloadHeaderLen+8192:PayloadHeaderLen+12288], f0[PayloadHeaderLen+8192:])
	if _, ok, corrupt := DecodePayload(torn); !ok || !corrupt {
		t.Fatalf("torn frame: ok=%v corrupt=%v, want corrupt", ok, corrupt)
	}
	// One flipped bit between stamps.
	bad := append([]byte(nil), f1...)
	bad[PayloadHeaderLen+5000] ^= 0x10
	if _, ok, corrupt := DecodePayload(bad); !ok || !corrupt {
		t.Fatalf("bit flip: ok=%v corrupt=%v, want corrupt", ok, corrupt)
	}
	// The header check alone catches a stale end.
	stale := append([]byte(nil), f1...)
	copy(stale[len(stale)-8:], f0[len(f0)-8:])
	if _, ok, corrupt := DecodePayloadHeader(stale); !ok || !corrupt {
		t.Fatalf("stale tail: ok=%v corrupt=%v, want corrupt", ok, corrupt)
	}
	if _, ok, corrupt := DecodePayload(f1[:len(f1)-1]); !ok || !corrupt {
		t.Fatalf("short frame: ok=%v corrupt=%v, want corrupt", ok, corrupt)
	}
	if _, ok, _ := DecodePayload(make([]byte, 100)); ok {
		t.Fatal("zero bytes decoded as a payload frame")
	}
}

func TestPayloadWorkersAndCount(t *testing.T) {
	const W, count = 3, 10
	seen := map[[2]uint64]bool{}
	for w := 0; w < W; w++ {
		s, err := NewPayloadSource(PayloadConfig{Size: 64, Count: count, Stream: 5}, w, W)
		if err != nil {
			t.Fatal(err)
		}
		bufs := make([][]byte, 8)
		for i := range bufs {
			bufs[i] = make([]byte, s.MaxFrame())
		}
		lens := make([]int, 8)
		next := uint64(0)
		for {
			n := s.Render(bufs, lens, 0)
			for i := 0; i < n; i++ {
				sig, ok, corrupt := DecodePayload(bufs[i][:lens[i]])
				// Each worker is its own stream with a gap-free sequence.
				if !ok || corrupt || sig.Stream != uint16(5+w) || sig.Seq != next {
					t.Fatalf("worker %d: stream %d seq %d (want %d, %d) ok=%v corrupt=%v", w, sig.Stream, sig.Seq, 5+w, next, ok, corrupt)
				}
				next++
				seen[[2]uint64{uint64(sig.Stream), sig.Seq}] = true
			}
			if n < len(bufs) {
				break
			}
		}
		// Worker w's share of the run: the frames k ≡ w (mod W) below count.
		if want := uint64((count - w + W - 1) / W); next != want {
			t.Fatalf("worker %d sent %d frames, want %d", w, next, want)
		}
	}
	if len(seen) != count {
		t.Fatalf("frames across workers = %d, want %d", len(seen), count)
	}
}

func TestPayloadRawAndFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.bin")
	if err := os.WriteFile(path, []byte("abcdefghij"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := NewPayloadSource(PayloadConfig{Size: 64, Raw: true, Fill: FillFile, File: path}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	b := renderOne(t, s)
	if len(b) != 64 || string(b[:23]) != "abcdefghijabcdefghijabc" {
		t.Fatalf("raw file payload = %q", b)
	}
	s, err = NewPayloadSource(PayloadConfig{Size: 64, Fill: FillFile, File: path, Verify: VerifyOff}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	b = renderOne(t, s)
	if b[5]&flagChecksum != 0 {
		t.Fatal("verify off still flags a checksum")
	}
	if _, ok, corrupt := DecodePayload(b); !ok || corrupt {
		t.Fatal("verify-off frame does not decode")
	}
}

func TestPayloadConfigErrors(t *testing.T) {
	for _, c := range []PayloadConfig{
		{Size: 63}, {Size: MaxPayload + 1}, {Size: 64, Fill: "zeros"}, {Size: 64, Fill: FillFile},
		{Size: 64, File: "x"}, {Size: 64, Fill: FillFile, File: "/nonexistent/wpg"},
	} {
		if _, err := NewPayloadSource(c, 0, 1); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	if _, err := ParseVerify("maybe"); err == nil {
		t.Error("ParseVerify(maybe): no error")
	}
	for s, want := range map[string]VerifyMode{"on": VerifyOn, "sample": VerifySample, "off": VerifyOff} {
		if m, err := ParseVerify(s); err != nil || m != want || m.String() != s {
			t.Errorf("ParseVerify(%q) = %v, %v", s, m, err)
		}
	}
}

func TestPayloadRenderNoAllocs(t *testing.T) {
	s, _ := NewPayloadSource(PayloadConfig{Size: 4096}, 0, 1)
	bufs := [][]byte{make([]byte, s.MaxFrame()), make([]byte, s.MaxFrame())}
	lens := make([]int, 2)
	if a := testing.AllocsPerRun(100, func() { s.Render(bufs, lens, 1) }); a != 0 {
		t.Fatalf("Render allocates %.1f times per batch", a)
	}
	if a := testing.AllocsPerRun(100, func() { DecodePayload(bufs[0][:lens[0]]) }); a != 0 {
		t.Fatalf("DecodePayload allocates %.1f times", a)
	}
}

func benchSizes() []int { return []int{64, 4096, 460800, 1 << 20} }

// BenchmarkPayloadRender renders into one buffer again and again (primed
// after the first frame), with verification on (a stamp per 4 KiB page,
// derived CRC-32C) and off (the two end stamps only).
func BenchmarkPayloadRender(b *testing.B) {
	for _, mode := range []VerifyMode{VerifyOn, VerifyOff} {
		for _, size := range benchSizes() {
			b.Run("verify-"+mode.String()+"/"+sizeName(size), func(b *testing.B) {
				s, _ := NewPayloadSource(PayloadConfig{Size: size, Verify: mode}, 0, 1)
				bufs := [][]byte{make([]byte, s.MaxFrame())}
				lens := []int{0}
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					s.Render(bufs, lens, 1)
				}
			})
		}
	}
}

func BenchmarkDecodePayload(b *testing.B) {
	for _, size := range benchSizes() {
		b.Run(sizeName(size), func(b *testing.B) {
			s, _ := NewPayloadSource(PayloadConfig{Size: size}, 0, 1)
			f := renderOne(b, s)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				DecodePayload(f)
			}
		})
	}
}

func sizeName(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return itoa(n>>20) + "MiB"
	case n >= 1024 && n%1024 == 0:
		return itoa(n>>10) + "KiB"
	}
	return itoa(n) + "B"
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestPayloadDecoderSample(t *testing.T) {
	s, _ := NewPayloadSource(PayloadConfig{Size: 8192}, 0, 1)
	f := renderOne(t, s)
	bad := append([]byte(nil), f...)
	bad[PayloadHeaderLen+5000] ^= 1 // between stamps: only the CRC sees it
	dec := PayloadDecoder(VerifySample)
	caught := 0
	for i := 0; i < 2*SampleEvery; i++ {
		if _, ok, corrupt := dec(bad); ok && corrupt {
			caught++
		}
	}
	if caught != 2 {
		t.Fatalf("sample mode caught %d of %d damaged frames, want 2 (one in %d)", caught, 2*SampleEvery, SampleEvery)
	}
	if _, _, corrupt := PayloadDecoder(VerifyOn)(bad); !corrupt {
		t.Fatal("verify on missed the damage")
	}
	if _, ok, corrupt := PayloadDecoder(VerifyOff)(bad); !ok || corrupt {
		t.Fatal("verify off should only check header and stamps")
	}
	if !PayloadHasChecksum(f) {
		t.Fatal("a verify-on frame has no checksum flag")
	}
}

// The sampled decoder reads the unchecked frames with the reader its
// caller chose for the run, not with a process-wide one.
func TestPayloadDecoderWithReader(t *testing.T) {
	s, _ := NewPayloadSource(PayloadConfig{Size: 8192}, 0, 1)
	f := renderOne(t, s)
	reads := 0
	dec := PayloadDecoderWith(VerifySample, func(b []byte) uint64 {
		reads++
		if len(b) != 8192 {
			t.Errorf("reader got %d bytes, want the 8192-byte payload", len(b))
		}
		return 0
	})
	for range SampleEvery {
		if _, ok, corrupt := dec(f); !ok || corrupt {
			t.Fatal("a good frame failed the sampled check")
		}
	}
	if reads != SampleEvery-1 {
		t.Fatalf("reader called %d times for %d frames, want %d (all but the fully checked one)", reads, SampleEvery, SampleEvery-1)
	}
}

// Re-rendering into a buffer that carries the base image only rewrites
// header and stamps, and the result is identical to a full render.
func TestPayloadPrimedBufferMatchesFullRender(t *testing.T) {
	for _, size := range []int{4097, 460800} {
		a, _ := NewPayloadSource(PayloadConfig{Size: size, Fill: FillRandom, Seed: 3}, 0, 1)
		b, _ := NewPayloadSource(PayloadConfig{Size: size, Fill: FillRandom, Seed: 3}, 0, 1)
		reused := [][]byte{make([]byte, a.MaxFrame())}
		lens := []int{0}
		for i := 0; i < 3; i++ {
			a.Render(reused, lens, 5)
			fresh := [][]byte{make([]byte, b.MaxFrame())}
			b.Render(fresh, lens, 5)
			if string(reused[0]) != string(fresh[0]) {
				t.Fatalf("size %d frame %d: primed render differs from a full render", size, i)
			}
			if _, ok, corrupt := DecodePayload(reused[0]); !ok || corrupt {
				t.Fatalf("size %d frame %d does not verify", size, i)
			}
		}
	}
}

// With VerifyOff the sender stamps only the two end words and flags it;
// every decoder accepts such a frame, and still catches a stale end stamp.
func TestPayloadVerifyOffEndStamps(t *testing.T) {
	s, _ := NewPayloadSource(PayloadConfig{Size: 3 * StampStride, Verify: VerifyOff}, 0, 1)
	f := renderOne(t, s)
	if f[5] != flagEndStamps {
		t.Fatalf("flags %#x, want end stamps only", f[5])
	}
	p := f[PayloadHeaderLen:]
	if got := binary.LittleEndian.Uint64(p[StampStride:]); got == 1 {
		t.Fatal("a middle stamp was written with verify off")
	}
	for _, mode := range []VerifyMode{VerifyOn, VerifySample, VerifyOff} {
		if _, ok, corrupt := PayloadDecoder(mode)(f); !ok || corrupt {
			t.Fatalf("verify %v rejects an end-stamped frame", mode)
		}
	}
	binary.LittleEndian.PutUint64(p[len(p)-8:], 7)
	if _, _, corrupt := DecodePayload(f); !corrupt {
		t.Fatal("a stale last stamp passed")
	}
}

// A short --payload-file for a large payload is read into a buffer of its
// own size and repeated: a 10-byte file for a 1 GiB payload used to cost a
// 1 GiB read buffer (and a fatal out-of-memory under an address-space limit).
func TestPayloadFileBufferSizedByTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.bin")
	if err := os.WriteFile(path, []byte("abcdefghij"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := baseBlock(PayloadConfig{Size: MaxPayload, Fill: FillFile, File: path})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "abcdefghij" || cap(b) != 10 {
		t.Fatalf("base block %q, cap %d: want the 10 bytes of the file in a 10-byte buffer", b, cap(b))
	}
}

// TestPayloadDetectsEveryFlip: DecodePayload catches a single flipped bit
// anywhere in a large payload (where the receiver's CRC-32C is the folded
// kernel on CPUs that have it), and a swap of two different 8-byte words
// between stamps (which a sum of words would miss).
func TestPayloadDetectsEveryFlip(t *testing.T) {
	for _, size := range []int{460800, 1 << 20} {
		s, err := NewPayloadSource(PayloadConfig{Size: size, Fill: FillRandom, Seed: 9}, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		f := renderOne(t, s)
		if _, ok, corrupt := DecodePayload(f); !ok || corrupt {
			t.Fatalf("size %d: intact frame: ok=%v corrupt=%v", size, ok, corrupt)
		}
		for k := 0; k < 300; k++ {
			p := PayloadHeaderLen + (k*7919*131)%size
			bit := byte(1) << (k % 8)
			f[p] ^= bit
			if _, ok, corrupt := DecodePayload(f); !ok || !corrupt {
				t.Fatalf("size %d: bit %#x of payload byte %d flipped: ok=%v corrupt=%v", size, bit, p-PayloadHeaderLen, ok, corrupt)
			}
			f[p] ^= bit
		}
		a, b := PayloadHeaderLen+16, PayloadHeaderLen+2048
		wa, wb := binary.LittleEndian.Uint64(f[a:]), binary.LittleEndian.Uint64(f[b:])
		if wa == wb {
			t.Fatal("test words are equal")
		}
		binary.LittleEndian.PutUint64(f[a:], wb)
		binary.LittleEndian.PutUint64(f[b:], wa)
		if _, ok, corrupt := DecodePayload(f); !ok || !corrupt {
			t.Fatalf("size %d: two words swapped: ok=%v corrupt=%v", size, ok, corrupt)
		}
	}
}
