package main

import (
	"fmt"
	"strings"
)

// buildDescription names the binary on one line, as artifacts record it (see
// buildInfo.Description).
func buildDescription() string { return currentBuild().Description() }

// commandLine is the command line simrun was started with, quoted for a shell.
func (env *environment) commandLine() string {
	if len(env.args) == 0 {
		return "simrun"
	}
	quoted := []string{"simrun"}
	for _, a := range env.args {
		quoted = append(quoted, shellQuote(a))
	}
	return strings.Join(quoted, " ")
}

// provenance is the lines every artifact carries: the build that made it and the command line.
func provenance(env *environment) string {
	return fmt.Sprintf("build: %s\ncommand: %s\n", buildDescription(), env.commandLine())
}

// buildHeaderPrefix starts the comment line that records, in a saved script, the build that
// wrote it. The script parser skips comments; loadScript reads this one back.
const buildHeaderPrefix = "# build: "

// scriptHeader is the comment block a saved script starts with: the build that wrote it and the
// command line, so that the file says where it came from.
func scriptHeader(env *environment) string {
	return buildHeaderPrefix + buildDescription() + "\n# command: " + env.commandLine() + "\n"
}

// scriptBuild returns the build a script file records in its header, or "".
func scriptBuild(text string) string {
	for _, line := range strings.Split(text, "\n") {
		if build, ok := strings.CutPrefix(strings.TrimSpace(line), buildHeaderPrefix); ok {
			return strings.TrimSpace(build)
		}
	}
	return ""
}

// otherBuildWarning says so when a script was written by another build than this one: a seed
// replays alike only on the same code, so a different trace is then expected, not a bug. It is
// "" when the builds match or the script does not say.
func otherBuildWarning(path, text string) string {
	written := scriptBuild(text)
	if written == "" || written == buildDescription() {
		return ""
	}
	return fmt.Sprintf("note: %s was written by another build (%s); this is %s: the run may differ from the one it recorded",
		path, written, buildDescription())
}
