package main

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// buildInfo names the simrun binary that made an output: outputs from different builds may not be
// merged or compared seed by seed, since a change to the model or the checkers changes what a seed
// does. It is read from the binary's embedded build information (debug.ReadBuildInfo), which the Go
// toolchain stamps with the module version and, when built inside a git checkout, the commit.
type buildInfo struct {
	// Version is the main module's version: a tag or pseudo-version for 'go install m@v', "(devel)"
	// for a build in the checkout.
	Version string `json:"version"`
	// Revision is the vcs.revision setting: the commit the binary was built from, if known.
	Revision string `json:"revision,omitempty"`
	// Modified is the vcs.modified setting: the checkout had uncommitted changes.
	Modified bool `json:"modified,omitempty"`
	// GoVersion is the toolchain that built the binary.
	GoVersion string `json:"go_version"`
	// Path is the main module's path, and Time the vcs.time setting (the commit's time).
	Path string `json:"path,omitempty"`
	Time string `json:"time,omitempty"`
}

// linkedRevision is the commit, set at link time (-ldflags "-X main.linkedRevision=COMMIT") by a
// build that has no git checkout to stamp from, such as deploy/k8s/Dockerfile's: the toolchain's
// vcs.revision wins when both are present.
var linkedRevision string

// currentBuild returns this binary's build information. A test binary has no main module version
// and no vcs settings; it still names its toolchain.
func currentBuild() buildInfo {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return buildInfo{Version: "unknown"}
	}
	b := buildInfo{Version: info.Main.Version, GoVersion: info.GoVersion, Path: info.Main.Path}
	if b.Version == "" {
		b.Version = "unknown"
	}
	b.Revision = linkedRevision
	for _, setting := range info.Settings {
		switch setting.Key {
		case "vcs.revision":
			b.Revision = setting.Value
		case "vcs.modified":
			b.Modified = setting.Value == "true"
		case "vcs.time":
			b.Time = setting.Value
		}
	}
	return b
}

// String renders the build on one line, as messages and the failure store name it.
func (b buildInfo) String() string {
	s := b.Version
	if b.Revision != "" {
		s += " " + b.Revision
		if b.Modified {
			s += "+modified"
		}
	}
	if b.GoVersion != "" {
		s += fmt.Sprintf(" (%s)", b.GoVersion)
	}
	return s
}

// Description names the build for a person and for artifacts: module path and version, the VCS
// revision it was built from (with "+modified" when the work tree had changes) or "revision
// unknown" ('go test' binaries and builds outside a checkout carry none), and the toolchain.
func (b buildInfo) Description() string {
	path := b.Path
	if path == "" {
		path = "github.com/zabsim/zabsim"
	}
	var s strings.Builder
	fmt.Fprintf(&s, "%s %s", path, b.Version)
	if b.Revision == "" {
		s.WriteString(" revision unknown")
	} else {
		fmt.Fprintf(&s, " revision %s", b.Revision)
		if b.Modified {
			s.WriteString("+modified")
		}
		if b.Time != "" {
			fmt.Fprintf(&s, " (%s)", b.Time)
		}
	}
	fmt.Fprintf(&s, " %s", b.GoVersion)
	return s.String()
}
