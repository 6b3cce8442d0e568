package all

import _ "github.com/wpg-dev/wpg/backend/udmabuf" // DMA buffers: u-dma-buf /dev/udmabufN, mainline /dev/udmabuf
