package engine

import "fmt"

// AutoCores chooses the CPU of each of workers workers for --auto-pin:
// allowed CPUs on the NIC's NUMA node first (nodeCPUs; nil when unknown),
// then the other allowed CPUs, CPU 0 always last. When there are more
// workers than allowed CPUs, CPUs are reused in the same order.
func AutoCores(allowed, nodeCPUs []int, workers int) ([]int, error) {
	if len(allowed) == 0 {
		return nil, fmt.Errorf("auto-pin: the process may run on no CPU")
	}
	onNode := map[int]bool{}
	for _, c := range nodeCPUs {
		onNode[c] = true
	}
	var order []int
	for pass := 0; pass < 2; pass++ {
		for _, c := range allowed {
			if c != 0 && onNode[c] == (pass == 0) {
				order = append(order, c)
			}
		}
	}
	for _, c := range allowed {
		if c == 0 {
			order = append(order, 0)
		}
	}
	cores := make([]int, workers)
	for i := range cores {
		cores[i] = order[i%len(order)]
	}
	return cores, nil
}

// CheckCores verifies that every requested CPU is one the process may use.
func CheckCores(cores, allowed []int) error {
	ok := map[int]bool{}
	for _, c := range allowed {
		ok[c] = true
	}
	for _, c := range cores {
		if !ok[c] {
			return fmt.Errorf("CPU %d is not available to this process (allowed: %v): choose one of those", c, allowed)
		}
	}
	return nil
}
