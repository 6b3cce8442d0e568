package all

import _ "github.com/wpg-dev/wpg/backend/afxdp" // AF_XDP sockets with their own UMEM, XDP-steered receiver
