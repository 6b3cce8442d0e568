package template

import "github.com/wpg-dev/wpg/engine"

// Source is what the engine drives.
var _ engine.Source = (*Source)(nil)
