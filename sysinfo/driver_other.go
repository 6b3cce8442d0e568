//go:build !linux

package sysinfo

import "errors"

// haveLiveDriver says whether liveDriver can ask the kernel.
const haveLiveDriver = false

// liveDriver has no kernel to ask on this system.
func liveDriver(string) (string, error) { return "", errors.ErrUnsupported }
