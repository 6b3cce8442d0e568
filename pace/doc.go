// Package pace decides when frames may go: it parses --rate (frames,
// bits or a fixed inter-frame gap, split across workers), reads a fast
// clock (the invariant TSC on x86-64, calibrated against CLOCK_MONOTONIC,
// or the vDSO monotonic clock), and paces one worker with a token bucket
// that waits by spinning, sleeping or both (learning how late its sleeps
// wake), and records how late every grant was in an HdrHistogram.
//
// The engine gives each of W workers its own Pacer with
// rate.Split(W).FramesPerSecond(meanFrameBytes, layer); streams share a
// worker's rate inside the frame source, not here. A source whose streams
// keep their own schedules (rates, bursts, a capture's own timing) is a
// Timetable the pacer follows instead of one rate (Pacer.Follow).
//
// Privileges: none. Setup lowers the calling thread's timer slack
// (PR_SET_TIMERSLACK), which any thread may do for itself.
package pace
