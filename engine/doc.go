// Package engine runs wpg's workers. Each worker is a goroutine locked to its
// own OS thread, pinned to a CPU when asked, that opens its own backend
// instance and builds its own frame source after pinning (so Linux's
// first-touch places the memory on the worker's NUMA node), then loops:
// wait for the pacer's grant, reserve buffers from the backend, render a batch
// straight into them, commit. Counters are published once per batch with
// atomic stores; nothing in the loop allocates or logs.
//
// The engine knows nothing about templates, rates or reports: it is given a
// source factory, a backend registration, an optional pacer factory and a
// clock, and returns per-worker results. A source that keeps its own
// schedule (TimedSource) is handed to the pacer to follow (Follower); one
// that counts its streams (StreamCounter) reports them per worker.
package engine
