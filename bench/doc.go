// Package bench runs wpg's benchmark matrix: every data path this host can
// run, at a small and a large frame size, each with its tuned defaults and
// the variants that matter (pipe with and without vmsplice, shm read in
// place and copied out, the network paths with and without the qdisc
// bypass), next to the two references (the null generator for network
// paths, memcpy for local ones). Each cell is repeated; the result ranks
// the paths per size with the median, the min–max spread, the ratio to
// the reference, the CPU time per frame, and one line of advice per
// table, and it says plainly when the machine was too noisy for the
// figures to be trusted (steal time, load from other processes, CPU
// stalls, frequency changes, the repeats' spread), with the evidence.
//
// Each cell is one job.Start of a job.Spec, as `wpg bench --backend NAME`
// runs it: local paths start their own receiver process. Network rows
// need root: Run creates a private network namespace with a veth pair
// (package internal/netns), sends across it and removes it on every exit
// path; namespaces left behind by a killed wpg are removed at the next
// Run. Without root the network rows are listed as skipped, with the
// reason.
//
// The package prints nothing: Run returns a Result, which WriteTable and
// encoding/json render; Config.Progress reports each cell as it starts.
package bench
