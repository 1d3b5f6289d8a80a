package main

import (
	"fmt"
	"runtime/debug"
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
	b := buildInfo{Version: info.Main.Version, GoVersion: info.GoVersion}
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
