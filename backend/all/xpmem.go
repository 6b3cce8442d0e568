package all

import _ "github.com/wpg-dev/wpg/backend/xpmem" // XPMEM attach, frames read in place (where /dev/xpmem exists)
