// Command ratebench drives a pace.Pacer directly with a null consumer (no
// frames are built) on a locked OS thread and prints how well it kept the
// rate: achieved ratio, lateness mean/p50/p99/max and the thread's CPU use.
// It isolates the pacer from the engine and backends; scripts/ratebench.sh
// measures the same through `wpg send --backend null`.
//
//	go run ./scripts/ratebench -rate 1kpps -wait hybrid -clock auto -duration 3s
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/pace"
)

type result struct {
	Rate         string  `json:"rate"`
	Wait         string  `json:"wait"`
	Clock        string  `json:"clock"`
	Burst        int     `json:"burst"`
	Seconds      float64 `json:"seconds"`
	Frames       int64   `json:"frames"`
	TargetPPS    float64 `json:"target_pps"`
	PPS          float64 `json:"pps"`
	Ratio        float64 `json:"achieved_ratio"`
	LatMeanNs    int64   `json:"lateness_mean_ns"`
	P50Ns        int64   `json:"p50_jitter"`
	P99Ns        int64   `json:"p99_jitter"`
	LatMaxNs     int64   `json:"lateness_max_ns"`
	Behind       int64   `json:"behind"`
	Forgiven     int64   `json:"forgiven"`
	CPUCores     float64 `json:"cpu_cores"`
	OversleepNs  int64   `json:"oversleep_mean_ns"`
	OversleepP90 int64   `json:"oversleep_p90_ns"`
	ClockWhy     string  `json:"clock_why"`
	PinnedCPU    int     `json:"cpu"`
}

func main() {
	rateS := flag.String("rate", "1kpps", "target rate (pps/fps; bit rates use -size)")
	size := flag.Float64("size", 64, "frame size for bit rates")
	waitS := flag.String("wait", "hybrid", "spin, sleep, hybrid")
	clockS := flag.String("clock", "auto", "auto, tsc, monotonic")
	burst := flag.Int("burst", 0, "frames per grant (0 = auto)")
	batch := flag.Int("batch", 64, "max frames per grant")
	dur := flag.Duration("duration", 3*time.Second, "run time")
	pin := flag.Int("pin", -1, "pin to this CPU")
	sleepTest := flag.Duration("sleeptest", 0, "instead: measure the oversleep of absolute sleeps this long (normal and raw syscall)")
	slack := flag.Duration("slack", time.Microsecond, "timer slack for -sleeptest (the kernel default is 50µs)")
	flag.Parse()
	fail := func(err error) { fmt.Fprintln(os.Stderr, "ratebench:", err); os.Exit(2) }
	if *sleepTest > 0 {
		runtime.LockOSThread()
		if *pin >= 0 {
			_ = sys.PinThread(*pin)
		}
		if err := sys.SetTimerSlack(uint64(slack.Nanoseconds())); err != nil {
			fail(err)
		}
		for _, raw := range []bool{false, true} {
			var over []int64
			for range int(*dur / *sleepTest) {
				t := sys.NanotimeNs() + sleepTest.Nanoseconds()
				if raw {
					_ = sys.SleepUntilMonotonicRaw(t)
				} else {
					_ = sys.SleepUntilMonotonic(t)
				}
				over = append(over, sys.NanotimeNs()-t)
			}
			slices.Sort(over)
			fmt.Printf("slack=%v raw=%v n=%d oversleep p50=%d p90=%d p99=%d max=%d ns\n", *slack, raw, len(over), over[len(over)/2], over[len(over)*9/10], over[len(over)*99/100], over[len(over)-1])
		}
		return
	}

	rate, err := pace.ParseRate(*rateS)
	if err != nil {
		fail(err)
	}
	wait, err := pace.ParseWait(*waitS)
	if err != nil {
		fail(err)
	}
	clk, err := pace.NewClock(*clockS)
	if err != nil {
		fail(err)
	}
	cfg := rate.Config(*size, pace.L2, 1)
	if !cfg.IFG {
		cfg.Burst = *burst
	}
	cfg.Wait, cfg.Clock = wait, clk

	runtime.LockOSThread()
	if *pin >= 0 {
		if err := sys.PinThread(*pin); err != nil {
			fail(err)
		}
	}
	p := pace.New(cfg)
	if err := p.Setup(); err != nil {
		fail(err)
	}
	var stop atomic.Bool
	time.AfterFunc(*dur, func() { stop.Store(true) })
	cpu0 := sys.ThreadCPUTimeNs()
	var frames int64
	var first, last int64
	for {
		n := p.Grant(*batch, &stop)
		if n == 0 {
			break
		}
		now := clk.Now()
		if first == 0 {
			first = now
		}
		last = now
		frames += int64(n)
	}
	cpu := sys.ThreadCPUTimeNs() - cpu0
	st := p.Stats()
	secs := float64(last-first) / 1e9
	r := result{
		Rate: rate.String(), Wait: wait.String(), Clock: clk.Source(), Burst: p.Burst(),
		Seconds: secs, Frames: frames, TargetPPS: cfg.FPS,
		LatMeanNs: st.LatenessMeanNs, P50Ns: st.LatenessP50Ns, P99Ns: st.LatenessP99Ns, LatMaxNs: st.LatenessMaxNs,
		Behind: st.Behind, Forgiven: st.Forgiven, CPUCores: float64(cpu) / float64(last-first),
		ClockWhy: clk.Why(), PinnedCPU: *pin,
	}
	// frames granted before the last grant, over the time to it
	if secs > 0 {
		r.PPS = float64(frames-int64(p.Burst())) / secs
		if st.Frames > 0 {
			r.PPS = float64(frames-lastGrant(p)) / secs
		}
		r.Ratio = r.PPS / cfg.FPS
	}
	m, d := p.Oversleep()
	r.OversleepNs, r.OversleepP90 = int64(m), int64(d)
	enc := json.NewEncoder(os.Stdout)
	_ = enc.Encode(r)
}

// lastGrant is the size of the final grant: the frames released at the
// last timestamp do not count towards the interval that ends there.
func lastGrant(p *pace.Pacer) int64 { return int64(p.Burst()) }
