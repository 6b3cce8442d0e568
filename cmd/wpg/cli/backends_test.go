package cli

// The CLI reference lists the backends, so the tests register the same ones
// as cmd/wpg.
import _ "github.com/wpg-dev/wpg/backend/all"
