// Package sysinfo describes the machine a measurement ran on: CPU model,
// cores and the CPUs the process may use, NUMA nodes, frequency governor,
// kernel, TSC flags, and for a network interface its driver, speed, MTU,
// queues, NUMA node, XPS and RPS maps; pipe-max-size and the memlock limit.
//
// Everything is read from /proc and /sys below an injectable root (FS), and
// reading is kept apart from parsing so that the parsers are tested on
// fixture trees under testdata/. Optional values are pointers: nil means
// "not available here", which is different from zero. No privileges are
// needed.
package sysinfo
