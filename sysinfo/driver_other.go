//go:build !linux

package sysinfo

var liveDriver func(string) (string, error)
