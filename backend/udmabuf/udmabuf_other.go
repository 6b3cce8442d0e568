//go:build !linux

package udmabuf
