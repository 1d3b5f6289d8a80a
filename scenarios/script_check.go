package scenarios

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/zabsim/zabsim/clock"
)

// maxScriptDuration bounds a script's duration as Options.Validate bounds the options' own.
const maxScriptDuration = clock.Hour

// targetKinds is a set of the kinds of node a target argument may name.
type targetKinds uint8

const (
	aServer   targetKinds = 1 << iota // zk1..zkN: voters, then observers
	aClient                           // c1..cN
	theLeader                         // leader: the leader serving at that moment
	aFollower                         // follower: some serving follower
	everyone                          // all: every server, or every client for the client verbs
	aRedis                            // r1..rN: the Redis servers of a Redis lock workload (crash, restart and the verbs that take any node)
)

// anyNode is every kind of target.
const anyNode = aServer | aClient | theLeader | aFollower | everyone | aRedis

// targetRule says what the target arguments of one verb may name, and how to say it.
type targetRule struct {
	kinds targetKinds
	what  string
}

// verbTargets gives each verb with targets its rule, as Script's grammar documents it. A verb
// that acts on one kind of process refuses the other: "kill zk1" or "crash c1" is a mistake worth
// reporting, not a target that happens to mean something else.
var verbTargets = map[string]targetRule{
	"crash":      {aServer | theLeader | aFollower | everyone | aRedis, "a server (zk1, zk2, ...), leader, follower or all"},
	"crashpoint": {aServer | theLeader | aFollower | everyone, "a server (zk1, zk2, ...), leader, follower or all"},
	"pausepoint": {aServer | theLeader | aFollower | everyone, "a server (zk1, zk2, ...), leader, follower or all"},
	"resetpoint": {aServer | theLeader | aFollower | everyone, "a server (zk1, zk2, ...), leader, follower or all"},
	// A serving leader or follower is running by definition, so restarting one could never do
	// anything.
	"restart":   {aServer | everyone | aRedis, "a server (zk1, zk2, ...) or all (leader and follower name running servers)"},
	"partition": {anyNode, "servers (zk1, zk2, ...), clients (c1, c2, ...), leader, follower or all"},
	"oneway":    {aServer | aClient | theLeader | aFollower | aRedis, "one node: a server (zk1, zk2, ...), a client (c1, c2, ...), leader or follower"},
	"isolate":   {anyNode, "a server (zk1, zk2, ...), a client (c1, c2, ...), leader, follower or all"},
	"clog":      {anyNode, "a server (zk1, zk2, ...), a client (c1, c2, ...), leader, follower or all"},
	"reset":     {anyNode, "a server (zk1, zk2, ...), a client (c1, c2, ...), leader, follower or all"},
	"pause":     {anyNode, "a server (zk1, zk2, ...), a client (c1, c2, ...), leader, follower or all"},
	"drift":     {anyNode, "a server (zk1, zk2, ...), a client (c1, c2, ...), leader, follower or all"},
	"stepwall":  {anyNode, "a server (zk1, zk2, ...), a client (c1, c2, ...), leader, follower or all"},
	"stall":     {aServer | theLeader | aFollower | everyone, "a server (zk1, zk2, ...), leader, follower or all"},
	"kill":      {aClient | everyone, "a client (c1, c2, ...) or all"},
	"revive":    {aClient | everyone, "a client (c1, c2, ...) or all"},
	"expire":    {aClient | everyone, "a client (c1, c2, ...) or all"},
}

// clientVerbs act on client processes; for them "all" means every client.
var clientVerbs = []string{"kill", "revive", "expire"}

// parseTarget reads a target name: its kind, and for zkN and cN the number N. Numbers are written
// plainly ("zk1", not "zk01" or "zk+1"), so that one node has one name.
func parseTarget(name string) (targetKinds, int, bool) {
	switch name {
	case "leader":
		return theLeader, 0, true
	case "follower":
		return aFollower, 0, true
	case "all":
		return everyone, 0, true
	}
	kind, digits := aServer, ""
	if rest, ok := strings.CutPrefix(name, "zk"); ok {
		digits = rest
	} else if rest, ok := strings.CutPrefix(name, "r"); ok {
		kind, digits = aRedis, rest
	} else if rest, ok := strings.CutPrefix(name, "c"); ok {
		kind, digits = aClient, rest
	} else {
		return 0, 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 1 || strconv.Itoa(n) != digits {
		return 0, 0, false
	}
	return kind, n, true
}

// targetArgs returns an action's arguments that name nodes.
func targetArgs(verb string, args []string) []string {
	switch verb {
	case "heal", "swizzle":
		return nil
	case "partition":
		var out []string
		for _, arg := range args {
			if arg != "|" {
				out = append(out, arg)
			}
		}
		return out
	case "oneway":
		return args
	}
	if len(args) == 0 {
		return nil
	}
	return args[:1]
}

// checkTargetKinds checks that every target of an action names a kind of node its verb acts on,
// and the shapes that need no cluster: partition groups that share no node, a one-way cut between
// two different nodes.
func checkTargetKinds(verb string, args []string) error {
	rule, ok := verbTargets[verb]
	if !ok {
		return nil
	}
	for _, name := range targetArgs(verb, args) {
		kind, _, ok := parseTarget(name)
		if !ok || rule.kinds&kind == 0 {
			return fmt.Errorf("%s takes %s, not %q", verb, rule.what, name)
		}
	}
	switch verb {
	case "oneway":
		if len(args) == 2 && args[0] == args[1] {
			return fmt.Errorf("oneway cuts %s from itself; it takes two different nodes", args[0])
		}
	case "partition":
		return checkGroups(args)
	}
	return nil
}

// checkGroups checks a partition's groups: none empty, and no node in two of them. "all" stands for
// every server, so it shares a node with any server named in another group; "leader" and
// "follower" are one node each, so naming one twice puts it in two groups. Whether "leader" is also
// some zkN named elsewhere is known only when the action happens (see runner.groups).
func checkGroups(args []string) error {
	var groups [][]string
	cur := []string{}
	for _, arg := range append(args[:len(args):len(args)], "|") {
		if arg != "|" {
			cur = append(cur, arg)
			continue
		}
		if len(cur) == 0 {
			return fmt.Errorf("partition has an empty group (groups are separated by '|')")
		}
		groups = append(groups, cur)
		cur = []string{}
	}
	seen := map[string]int{} // name -> group
	for g, group := range groups {
		for _, name := range group {
			if first, ok := seen[name]; ok {
				if first == g {
					return fmt.Errorf("partition names %s twice", name)
				}
				return fmt.Errorf("partition puts %s in two groups (%d and %d); a node is in one group", name, first+1, g+1)
			}
			seen[name] = g
		}
	}
	for g, group := range groups {
		for _, name := range group {
			if name != "all" {
				continue
			}
			for other, otherGroup := range groups {
				for _, n := range otherGroup {
					if kind, _, _ := parseTarget(n); other != g && kind&(aServer|theLeader|aFollower) != 0 {
						return fmt.Errorf("partition puts %s in two groups: group %d has all, which is every server", n, g+1)
					}
				}
			}
		}
	}
	return nil
}

// parseDrift reads a drift rate ("+200ppm", "-50ppm"), within what a local clock accepts.
func parseDrift(s string) (int64, error) {
	ppm, err := strconv.ParseInt(strings.TrimSuffix(s, "ppm"), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("drift takes a rate in ppm, like +200ppm, not %q", s)
	}
	if ppm < -clock.MaxDriftPPM || ppm > clock.MaxDriftPPM {
		return 0, fmt.Errorf("drift must be from -%dppm to +%dppm (clock.MaxDriftPPM), not %q", clock.MaxDriftPPM, clock.MaxDriftPPM, s)
	}
	return ppm, nil
}

// checkAction checks one action on its own, as the parser does: its verb, its number of
// arguments, their types and the kinds of node they name.
func checkAction(verb string, args []string) error {
	n, ok := verbs[verb]
	if !ok {
		return fmt.Errorf("unknown action %q", verb)
	}
	if n >= 0 && len(args) != n {
		return fmt.Errorf("%s takes %d argument(s), not %d", verb, n, len(args))
	}
	if n == -1 && (len(args) < 3 || !slices.Contains(args, "|")) {
		return fmt.Errorf("%s takes groups separated by '|'", verb)
	}
	return checkArgs(verb, args)
}

// check validates what needs the whole script: the settings that depend on each other, and every
// action against the cluster (each zkN and cN exists) and the fault phase (each action happens
// before it ends). clients and duration are the run's, which the options decide where the script
// does not; 0 means not known yet, and skips the checks that need it. statements gives the line of
// each setting, where the script was read from text (nil otherwise). An action built in code is
// checked as the parser would have checked it.
func (s *Script) check(clients int, duration clock.Duration, statements map[string]int) error {
	fail := func(statement, format string, args ...any) error {
		return &ScriptError{Line: statements[statement], Msg: fmt.Sprintf(format, args...)}
	}
	if s.Servers < 1 || s.Servers > 7 {
		return fail("servers", "servers must be a number from 1 to 7, not %d", s.Servers)
	}
	if s.Servers == 1 && s.Observers > 0 {
		return fail("observers", "a single server cannot have observers: it runs standalone, without a quorum to observe")
	}
	if s.Servers == 1 && s.InitialZxidCounter > 0 {
		// ZooKeeper applies zookeeper.testingonly.initialZxid only in a quorum leader
		// (Leader.lead); ZooKeeperServerMain has no epochs and never overflows its counter.
		return fail("zxidcounter", "zxidcounter needs more than one server: a standalone server (servers 1) never applies it, as ZooKeeper sets it only in a quorum leader")
	}
	nodes := s.Servers + max(s.Observers, 0)
	for _, a := range s.Actions {
		if err := s.checkPlaced(a, nodes, clients, duration); err != nil {
			return &ScriptError{Line: a.Line, Msg: fmt.Sprintf("%s: %v", a.String(), err)}
		}
	}
	return nil
}

// checkPlaced checks one action against the cluster's nodes (servers and observers), the run's
// clients and the fault phase's duration.
func (s *Script) checkPlaced(a Action, nodes, clients int, duration clock.Duration) error {
	if err := checkAction(a.Verb, a.Args); err != nil {
		return err
	}
	if a.At < 0 {
		return fmt.Errorf("negative time %s", formatDuration(a.At))
	}
	if duration > 0 && a.At >= duration {
		return fmt.Errorf("the action is not before the end of the fault phase (duration %s), so it would never happen as a fault", formatDuration(duration))
	}
	for _, name := range targetArgs(a.Verb, a.Args) {
		kind, n, _ := parseTarget(name)
		switch {
		case kind == aServer && n > nodes:
			return fmt.Errorf("there is no server %s: the cluster has zk1 to zk%d (%d servers and %d observers)", name, nodes, s.Servers, nodes-s.Servers)
		case kind == aClient && clients > 0 && n > clients:
			return fmt.Errorf("there is no client %s: the run has c1 to c%d", name, clients)
		case kind == aRedis && n > redisServerCount(s.Workload) && s.Workload != "":
			return fmt.Errorf("there is no Redis server %s: workload %s has %d (r1 to rN)", name, s.Workload, redisServerCount(s.Workload))
		}
	}
	return nil
}
