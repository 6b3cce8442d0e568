package cli

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/wpg-dev/wpg/job"
)

// The environment of --segment auto: Kubernetes sets JOB_COMPLETION_INDEX
// in every pod of an Indexed Job (completionMode: Indexed); the manifest
// sets WPG_SEGMENTS to the Job's completions (deploy/kubernetes).
const (
	envCompletionIndex = "JOB_COMPLETION_INDEX"
	envSegments        = "WPG_SEGMENTS"
)

// segmentValue resolves --segment: I/N as given (job.Validate checks it),
// auto from the environment through lookup (os.LookupEnv).
func segmentValue(v string, lookup func(string) (string, bool)) (string, error) {
	if !strings.EqualFold(strings.TrimSpace(v), "auto") {
		return v, nil
	}
	read := func(name, what string) (int, error) {
		s, ok := lookup(name)
		if !ok || strings.TrimSpace(s) == "" {
			return 0, fmt.Errorf("--segment auto: %s is not set: %s", name, what)
		}
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 0 {
			return 0, fmt.Errorf("--segment auto: %s=%q is not a number: %s", name, s, what)
		}
		return n, nil
	}
	i, err := read(envCompletionIndex, "auto takes the index from a pod of a Kubernetes Indexed Job (completionMode: Indexed, deploy/kubernetes); elsewhere give --segment I/N, e.g. --segment 0/3")
	if err != nil {
		return "", err
	}
	n, err := read(envSegments, "set it to the Job's completions, the number of segments, as deploy/kubernetes/base/sender-job.yaml does; or give --segment I/N")
	if err != nil {
		return "", err
	}
	if n < 1 || n > job.MaxSegments {
		return "", fmt.Errorf("--segment auto: %s=%d: is not a number of segments: set it to the Job's completions, 1 to %d (segments × workers at most %d)", envSegments, n, job.MaxSegments, job.MaxSegments)
	}
	if i >= n {
		return "", fmt.Errorf("--segment auto: %s=%d is not below %s=%d: the Job's completions and %s must be the same number", envCompletionIndex, i, envSegments, n, envSegments)
	}
	return fmt.Sprintf("%d/%d", i, n), nil
}

// lookupEnv is the environment --segment auto reads.
var lookupEnv = os.LookupEnv
