package config

// send.backend is checked against the registry (backend.Known), which
// the backends fill when their packages are imported, as wpg's are.
import _ "github.com/wpg-dev/wpg/backend/all"
