package pace_test

import (
	"fmt"

	"github.com/wpg-dev/wpg/pace"
)

func ExampleParseRate() {
	for _, s := range []string{"250kpps", "10Gbps", "ifg=10us", "15fps"} {
		r, err := pace.ParseRate(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		// 1500-byte frames, counted at layer 2 and at layer 1
		fmt.Printf("%-9s %.1f fps (l2), %.1f fps (l1), ifg=%v\n", r, r.FramesPerSecond(1500, pace.L2), r.FramesPerSecond(1500, pace.L1), r.IFG())
	}
	_, err := pace.ParseRate("1000")
	fmt.Println(err)
	// Output:
	// 250kpps   250000.0 fps (l2), 250000.0 fps (l1), ifg=false
	// 10Gbps    833333.3 fps (l2), 820210.0 fps (l1), ifg=false
	// ifg=10µs  100000.0 fps (l2), 100000.0 fps (l1), ifg=true
	// 15fps     15.0 fps (l2), 15.0 fps (l1), ifg=false
	// bad rate "1000": missing unit: say 1000pps, 1000fps or 1000Mbps (examples: 1Mpps, 250kpps, 1000pps, 15fps, 10Gbps, 500Mbps, 2.5Gbit/s, ifg=10us; empty = unlimited)
}

// Each of the engine's workers gets its own pacer with its share of the
// rate; an ifg= rate forces a burst of 1.
func ExampleRate_Config() {
	r, _ := pace.ParseRate("1Mpps")
	cfg := r.Config(64, pace.L2, 4)
	cfg.Wait = pace.Hybrid
	p := pace.New(cfg)
	fmt.Println(cfg.FPS, p.Burst())

	r, _ = pace.ParseRate("ifg=10us")
	cfg = r.Config(64, pace.L2, 2)
	cfg.Burst = 16 // --burst is ignored for ifg=
	fmt.Println(cfg.FPS, pace.New(cfg).Burst())
	// Output:
	// 250000 1
	// 50000 1
}
