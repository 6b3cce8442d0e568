//go:build !linux

package udmabuf

import "github.com/wpg-dev/wpg/backend"

var open = backend.LinuxOnly("udmabuf", "DMA buffers of the u-dma-buf and mainline udmabuf drivers")
