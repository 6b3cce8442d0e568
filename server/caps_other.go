//go:build !linux

package server

// hasCap: capabilities are Linux's; elsewhere none is held.
func hasCap(string) bool { return false }
