//go:build !amd64

package memread

func archImpls() []Impl { return nil }
