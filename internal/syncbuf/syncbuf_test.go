package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

func TestBounds(t *testing.T) {
	var all Buffer
	head := Buffer{Max: 4}
	tail := Buffer{Max: 4, Tail: true}
	var passed strings.Builder
	pass := Buffer{Max: 1, Pass: &passed}
	for _, w := range []string{"ab", "cde", "f", "ghijkl"} {
		for _, b := range []*Buffer{&all, &head, &tail, &pass} {
			if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
				t.Fatalf("Write(%q) = %d, %v", w, n, err)
			}
		}
	}
	for _, c := range []struct {
		b    *Buffer
		want string
	}{{&all, "abcdefghijkl"}, {&head, "abcd"}, {&tail, "ijkl"}, {&pass, "a"}} {
		if got := c.b.String(); got != c.want || c.b.Len() != len(c.want) {
			t.Errorf("kept %q (len %d), want %q", got, c.b.Len(), c.want)
		}
	}
	if passed.String() != "abcdefghijkl" {
		t.Errorf("passed on %q", passed.String())
	}
	small := Buffer{Max: 5, Tail: true}
	small.Write([]byte("abc"))
	small.Write([]byte("de"))
	small.Write([]byte("fg"))
	if got := small.String(); got != "cdefg" {
		t.Errorf("tail of abc+de+fg = %q, want cdefg", got)
	}
}

func TestConcurrent(t *testing.T) {
	b := Buffer{Max: 1 << 10, Tail: true}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 1000; j++ {
				b.Write([]byte("0123456789"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if b.Len() != 1<<10 {
		t.Fatalf("kept %d bytes, want %d", b.Len(), 1<<10)
	}
}
