package e2e

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// ffmpeg as a real client of the pipe path: 30 raw 640x360 YUYV frames at
// 15 fps decode to exactly 30 frames.
func TestFFmpegDecodesRawFramesFromPipe(t *testing.T) {
	ffmpeg := testbed.RequireTool(t, "ffmpeg", "ffmpeg")
	wpg := testbed.Wpg(t)
	send := exec.Command(wpg, "send", "--backend", "pipe", "--raw", "--size", "460800", "--rate", "15fps", "--count", "30")
	dec := exec.Command(ffmpeg, "-hide_banner", "-nostdin", "-f", "rawvideo", "-pix_fmt", "yuyv422", "-s", "640x360", "-i", "-", "-f", "framecrc", "-")
	pipe, err := send.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	dec.Stdin = pipe
	var sendErr, decOut, decErr bytes.Buffer
	send.Stderr = &sendErr
	dec.Stdout, dec.Stderr = &decOut, &decErr
	if err := send.Start(); err != nil {
		t.Fatal(err)
	}
	if err := dec.Start(); err != nil {
		t.Fatal(err)
	}
	if err := send.Wait(); err != nil {
		t.Fatalf("wpg send: %v\n%s", err, sendErr.String())
	}
	if err := dec.Wait(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, decErr.String())
	}
	frames := 0
	for _, l := range strings.Split(decOut.String(), "\n") {
		if strings.HasPrefix(l, "0,") {
			frames++
			if !strings.Contains(l, "460800") {
				t.Errorf("ffmpeg frame line %q: want 460800-byte frames", l)
			}
		}
	}
	if frames != 30 {
		t.Fatalf("ffmpeg decoded %d frames, want 30\nwpg: %s\nffmpeg: %s", frames, sendErr.String(), decErr.String())
	}
	// The sender's report (on stderr, stdout carries the frames) shows one
	// write per frame into the enlarged pipe.
	for _, want := range []string{"writes_per_frame  1.000", "frames              30"} {
		if !strings.Contains(sendErr.String(), want) {
			t.Errorf("wpg send report lacks %q:\n%s", want, sendErr.String())
		}
	}
}
