package cli

import (
	"strings"
	"testing"
)

// TestSegmentAuto reads --segment auto from an Indexed Job's environment
// and says what is missing elsewhere.
func TestSegmentAuto(t *testing.T) {
	for _, c := range []struct {
		v, index, segments string
		want, bad          string
	}{
		{"1/3", "", "", "1/3", ""},
		{"auto", "2", "3", "2/3", ""},
		{"AUTO", "0", "1", "0/1", ""},
		{"auto", "", "3", "", "JOB_COMPLETION_INDEX is not set"},
		{"auto", "1", "", "", "WPG_SEGMENTS is not set"},
		{"auto", "x", "3", "", `JOB_COMPLETION_INDEX="x" is not a number`},
		{"auto", "3", "3", "", "is not below WPG_SEGMENTS=3"},
		// The number of segments is named as the variable it came from.
		{"auto", "0", "0", "", "WPG_SEGMENTS=0: is not a number of segments: set it to the Job's completions, 1 to 256"},
		{"auto", "0", "1000", "", "WPG_SEGMENTS=1000: is not a number of segments: set it to the Job's completions, 1 to 256"},
	} {
		env := map[string]string{}
		if c.index != "" {
			env[envCompletionIndex] = c.index
		}
		if c.segments != "" {
			env[envSegments] = c.segments
		}
		got, err := segmentValue(c.v, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		switch {
		case c.bad == "" && (err != nil || got != c.want):
			t.Errorf("%s %v: %q, %v", c.v, env, got, err)
		case c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad) || !strings.HasPrefix(err.Error(), "--segment auto: ")):
			t.Errorf("%s %v: error %v, want %q", c.v, env, err, c.bad)
		}
	}
}
