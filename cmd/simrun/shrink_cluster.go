package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/zabsim/zabsim/scenarios"
)

// shrinkCluster tries fewer observers, then fewer voters (see shrinkSizes), keeping each change after
// which the run still fails alike. Actions that name a server the smaller cluster lacks are
// dropped; observers keep their place after the voters (zkN+1...), so their names move down with
// the voters'. A candidate the runner refuses (an action left without a target, a single server
// with observers) is skipped, not a failure of the shrinking.
func (s *shrinker) shrinkCluster(script *scenarios.Script) *scenarios.Script {
	for observers := 0; observers < script.Observers; observers++ {
		if candidate, ok := s.tryCluster(script, script.Servers, observers); ok {
			script = candidate
			break
		}
	}
	for _, servers := range shrinkSizes(script.Servers) {
		if candidate, ok := s.tryCluster(script, servers, script.Observers); ok {
			script = candidate
			break
		}
	}
	return script
}

// shrinkSizes lists the voter counts below servers that shrinking tries, smallest first. An odd
// ensemble shrinks to odd ones only, as it always did, so that a failure found with three or five
// voters is never reported with an even count whose quorum (more than half) behaves differently;
// an even ensemble tries the even counts below it as well.
func shrinkSizes(servers int) []int {
	var sizes []int
	for n := 1; n < servers; n++ {
		if n%2 == 1 || servers%2 == 0 {
			sizes = append(sizes, n)
		}
	}
	return sizes
}

// tryCluster runs the script on a cluster of servers voters and observers observers and reports
// whether it still fails alike.
func (s *shrinker) tryCluster(script *scenarios.Script, servers, observers int) (*scenarios.Script, bool) {
	c := *script
	c.Servers, c.Observers = servers, observers
	c.Actions = nil
	for _, a := range script.Actions {
		if renamed, ok := renameServers(a, script.Servers, servers, observers); ok {
			c.Actions = append(c.Actions, renamed)
		}
	}
	// An error is a spent run budget or a candidate the runner refused; either way the script
	// stays as it was.
	ok, err := s.fails(&c)
	if err != nil || !ok {
		return script, false
	}
	s.progress(&c)
	fmt.Fprintf(s.env.stderr, "shrink: %d servers and %d observers still fail alike\n", servers, observers)
	return &c, true
}

// renameServers maps an action's server names from a cluster of oldServers voters to one of
// servers voters and observers observers, and reports false when the action names a server the
// new cluster lacks.
func renameServers(a scenarios.Action, oldServers, servers, observers int) (scenarios.Action, bool) {
	args := make([]string, len(a.Args))
	for i, arg := range a.Args {
		n, err := strconv.Atoi(strings.TrimPrefix(arg, "zk"))
		if !strings.HasPrefix(arg, "zk") || err != nil {
			args[i] = arg
			continue
		}
		switch {
		case n <= oldServers && n <= servers:
			args[i] = arg
		case n > oldServers && n-oldServers <= observers:
			args[i] = "zk" + strconv.Itoa(servers+n-oldServers)
		default:
			return a, false
		}
	}
	a.Args = args
	return a, true
}
