package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

func init() { register(newManCmd) }

func newManCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "man DIR",
		Short: "write a section-1 man page for every command into DIR (wpg.1, wpg-send.1, …)",
		Long: `man writes the manual pages of wpg and each of its commands, from the same command tree as
docs/cli.md: their synopsis, description, every flag with its default, examples, and the related pages.
Read one with man -l DIR/wpg-send.1, or install them into a MANPATH directory (man1/).`,
		Example: "  wpg man /tmp/wpg-man && man -l /tmp/wpg-man/wpg-send.1\n  sudo wpg man /usr/local/share/man/man1 && sudo mandb",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			markStarted(cmd) // from here, a failure is the file system's
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("man: %w", err)
			}
			root := cmd.Root()
			root.DisableAutoGenTag = true // no date line: the same tree gives the same pages
			// No Title: each page takes its own (WPG-SEND), where one set here
			// would title every page WPG.
			header := &doc.GenManHeader{Section: "1", Source: "wpg " + Version, Manual: "wpg manual"}
			if err := doc.GenManTree(root, header, dir); err != nil {
				return fmt.Errorf("man: %w", err)
			}
			pages, _ := filepath.Glob(filepath.Join(dir, "wpg*.1"))
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %d man pages to %s (man -l %s)\n", len(pages), dir, filepath.Join(dir, "wpg-send.1"))
			return nil
		},
	}
}
