// Package examples holds wpg's example templates (the *.wpg.yaml files of
// this directory), embedded so that programs built from the module, such
// as `wpg serve`'s new-job page, offer the same files a user finds here.
package examples

import "embed"

// FS holds every example template, by its file name.
//
//go:embed *.wpg.yaml
var FS embed.FS
