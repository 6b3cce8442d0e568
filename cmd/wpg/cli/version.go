package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func init() { register(newVersionCmd) }

// Version is set at build time with -ldflags "-X .../cmd/wpg/cli.Version=…";
// left at "dev", the version comes from the build information instead
// (the module version of a `go install …@vX` binary).
var Version = "dev"

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print wpg's version and build",
		Long: `version prints wpg's version, the VCS revision it was built from (with its time, and
"modified" for a tree with uncommitted changes) where the build recorded one, the Go version and
the platform. wpg --version prints the same line.

The version is the one set at link time (-ldflags "-X github.com/wpg-dev/wpg/cmd/wpg/cli.Version=…"),
else the module version Go recorded (v1.2.3 for go install github.com/wpg-dev/wpg/cmd/wpg@v1.2.3),
else "dev" for a build from a source tree.`,
		Args: cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), versionLine())
		},
	}
}

// versionLine is what `wpg version` and `wpg --version` print.
func versionLine() string {
	bi, _ := debug.ReadBuildInfo()
	return formatVersion(Version, bi, runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
}

// formatVersion builds the version line from the link-time version, the
// build information (nil when the binary has none) and the toolchain.
func formatVersion(linked string, bi *debug.BuildInfo, goVersion, platform string) string {
	v := linked
	if (v == "" || v == "dev") && bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	if v == "" {
		v = "dev"
	}
	var rev, at, modified string
	if bi != nil {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = ", modified"
				}
			}
		}
	}
	line := "wpg " + v
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		line += " (" + rev
		if at != "" {
			line += " " + at
		}
		line += modified + ")"
	}
	return line + " " + goVersion + " " + platform
}
