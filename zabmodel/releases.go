package zabmodel

import (
	"fmt"
	"strings"
)

// Release is a ZooKeeper release profile: the set of bug switches that make the model behave as
// that release's Java does, where zabsim models the difference. Each switch is named after a bug
// or finding, and each release either has its code or the fix (checked against the release tags
// of apache/zookeeper).
type Release struct {
	// Name is what --zk-version takes: "fixed", "master", or a version such as "3.8.0".
	Name string
	// Bugs are the release's switches.
	Bugs Bugs
	// Summary says what the profile stands for.
	Summary string
	// Unmodelled says where the release differs from the profile because zabsim has no switch for
	// its exact behaviour, if anywhere.
	Unmodelled string
}

// DefaultRelease is the profile a run takes without --zk-version: zabsim's fixed model, master with
// every data-loss behaviour the harness found fixed. The release profiles contain those
// behaviours, and sweeps of them fail seeds for reasons known already; a sweep of the fixed model
// must be clean, so that any failure there is news (a regression of zabsim, or a new finding).
const DefaultRelease = "fixed"

// everyRelease are the switches of behaviour that every release from 3.8.0 to master has: Java's
// startup epoch check (epoch-refusal), and the three findings of this harness that no release
// fixed (stale-ack, snap-log-gap, trunc-snapshot).
var everyRelease = Bugs{}.With(BugEpochRefusal).With(BugStaleAck).With(BugSnapLogGap).With(BugTruncSnapshot)

// zk380Learner is Learner.syncWithLeader at NEWLEADER in 3.8.0 to 3.8.4 and 3.9.0 to 3.9.1:
// currentEpoch before the synced txns (ZK-4643), which go to the asynchronous sync processor
// (ZK-4646) and leave the pending list empty for a COMMIT before UPTODATE (ZK-4394).
var zk380Learner = Bugs{}.With(BugZK4643).With(BugZK4646).With(BugZK4394)

// before393 are the bugs of two upstream fixes that no release before 3.9.3 has, nor any 3.8.x:
// the full shutdown of a follower's processors (ZOOKEEPER-4712, fixed in 3.9.3) and the committed
// log of txns applied during sync (ZOOKEEPER-4925, fixed in 3.9.4).
var before393 = Bugs{}.With(BugZK4712).With(BugZK4925)

// zk385Learner is Learner.syncWithLeader at NEWLEADER in 3.8.5, 3.8.6 and 3.9.2: every pending
// proposal logged synchronously before currentEpoch and the ACK (ZOOKEEPER-4785), the pending list
// then emptied, so that a COMMIT before UPTODATE still meets ZOOKEEPER-4394's NullPointerException.
var zk385Learner = Bugs{}.With(BugZK4394Sync)

// before4846 is DataTree.createNode before ZOOKEEPER-4846's fix (in 3.8.5 and 3.9.4): a replayed
// create keeps the ACL index a fuzzy snapshot gave the node. It throws only where DataTree reads a
// node's ACL, which ZOOKEEPER-4799 (the CVE-2024-23944 fix: 3.8.4, 3.9.2, and Debian's 3.8.0) added,
// and which the model does in every profile; the releases without it get no switch and a note.
var before4846 = Bugs{}.With(BugZK4846)

// zk4689 is the Unmodelled note of the profiles whose DataTree reads ACLs (ZOOKEEPER-4799) and
// repairs a replayed create (ZOOKEEPER-4846): master and these releases throw where the model,
// which has ZOOKEEPER-4689's fix in every profile, does not. It has no switch because the swarm
// reaches it about once in 28,000 seeds (seeds 4025232 and 4047129 of the sweep from 4000001),
// which the hunt's budget would not find; datatree's TestFuzzySnapshotWithARecycledACLThrowsOnReplay
// shows master's behaviour.
const zk4689 = "ZOOKEEPER-4689 (open upstream): replaying a change to a fuzzy snapshot's node, made before its " +
	"ACL list was interned again, throws; the model has the fix"

// no4799 is the Unmodelled note of the releases without ZOOKEEPER-4799's ACL reads in DataTree.
const no4799 = "DataTree's ACL reads of ZOOKEEPER-4799 (3.8.4, 3.9.2), which the model has in every profile: " +
	"without them a fuzzy snapshot's node whose ACL index the cache lacks (ZOOKEEPER-4846) does not make " +
	"the replay throw, but a request that checks its ACL fails"

var releases = []Release{
	{Name: "fixed", Summary: "zabsim's model: master with the fixes of every finding of this harness (the default)"},
	{Name: "3.8.0", Bugs: union(everyRelease, zk380Learner, before393, before4846), Summary: "3.8.0 as Debian ships it: asynchronous NEWLEADER logging, currentEpoch first"},
	{Name: "3.8.1", Bugs: union(everyRelease, zk380Learner, before393), Summary: "as 3.8.0, without ZK-4846", Unmodelled: no4799},
	{Name: "3.8.2", Bugs: union(everyRelease, zk380Learner, before393), Summary: "as 3.8.0, without ZK-4846", Unmodelled: no4799},
	{Name: "3.8.3", Bugs: union(everyRelease, zk380Learner, before393), Summary: "as 3.8.0, without ZK-4846", Unmodelled: no4799},
	{Name: "3.8.4", Bugs: union(everyRelease, zk380Learner, before393, before4846), Summary: "as 3.8.0"},
	{Name: "3.8.5", Bugs: union(everyRelease, zk385Learner, before393), Summary: "synchronous NEWLEADER logging, then currentEpoch (ZOOKEEPER-4785), with ZOOKEEPER-4394's NullPointerException", Unmodelled: zk4689},
	{Name: "3.8.6", Bugs: union(everyRelease, zk385Learner, before393), Summary: "as 3.8.5 (the latest 3.8.x)", Unmodelled: zk4689},
	{Name: "3.9.0", Bugs: union(everyRelease, zk380Learner, before393), Summary: "as 3.8.0, without ZK-4846", Unmodelled: no4799},
	{Name: "3.9.1", Bugs: union(everyRelease, zk380Learner, before393), Summary: "as 3.8.0, without ZK-4846", Unmodelled: no4799},
	{Name: "3.9.2", Bugs: union(everyRelease, zk385Learner, before393, before4846), Summary: "as 3.8.5, without ZOOKEEPER-4846's fix"},
	{Name: "3.9.3", Bugs: everyRelease.With(BugZK4925).With(BugZK4846), Summary: "committed synced txns logged and applied before the ACK, outstanding ones kept (ZOOKEEPER-4394), processors shut down (ZOOKEEPER-4712)"},
	{Name: "3.9.4", Bugs: everyRelease, Summary: "as master", Unmodelled: zk4689},
	{Name: "3.9.5", Bugs: everyRelease, Summary: "as master (the latest 3.9.x)", Unmodelled: zk4689},
	{Name: "master", Bugs: everyRelease, Summary: "apache/zookeeper master: 3.9.3's sync and the committed log of synced txns (ZOOKEEPER-4925)", Unmodelled: zk4689},
}

func union(sets ...Bugs) Bugs {
	var out Bugs
	for _, s := range sets {
		out = out.Union(s)
	}
	return out
}

// Releases returns every release profile: the default first, then the releases in version order,
// master last.
func Releases() []Release { return append([]Release(nil), releases...) }

// ParseRelease returns the profile of a version ("" is the default). An unknown version is an
// error that lists the known ones.
func ParseRelease(version string) (Release, error) {
	if version == "" {
		version = DefaultRelease
	}
	for _, r := range releases {
		if strings.EqualFold(r.Name, strings.TrimSpace(version)) {
			return r, nil
		}
	}
	names := make([]string, 0, len(releases))
	for _, r := range releases {
		names = append(names, r.Name)
	}
	return Release{}, fmt.Errorf("%w: unknown ZooKeeper version %q (known: %s)", ErrConfig, version, strings.Join(names, ", "))
}

// ReleasesWith returns the names of the release profiles that have bug b switched on.
func ReleasesWith(b Bug) []string {
	var out []string
	for _, r := range releases {
		if r.Bugs.Has(b) {
			out = append(out, r.Name)
		}
	}
	return out
}
