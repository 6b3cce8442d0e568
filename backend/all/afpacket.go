package all

import _ "github.com/wpg-dev/wpg/backend/afpacket" // AF_PACKET TX/RX rings, sendmmsg
