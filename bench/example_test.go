package bench_test

import (
	"fmt"

	"github.com/wpg-dev/wpg/bench"
)

// The noise verdict is drawn from readings alone, so a test (or a client
// with readings of its own) can ask for it without running anything.
func ExampleJudge() {
	n := bench.Judge(bench.Readings{Seconds: 60, CPUs: 2, Spread: 0.38, SpreadRow: "shm at 1 MiB", StealShare: 0.06})
	fmt.Println(n.Verdict)
	fmt.Println(n.Summary)
	// Output:
	// noisy
	// spread 38 % (shm at 1 MiB), steal 6 %: rerun on a quiet machine
}
