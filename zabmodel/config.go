package zabmodel

import (
	"errors"
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/internal/quorum"
)

// Config describes an ensemble: its members and the settings of zoo.cfg that matter to the protocol.
// The zero value of each field takes ZooKeeper's default, except where a simulation wants another
// (noted on the field). Validate reports every field that makes no sense.
type Config struct {
	// Voters is the number of participants, 1 to MaxVoters, odd or even as in ZooKeeper (see
	// Quorum). Their sids are 1..Voters.
	Voters int
	// Observers is the number of observers, 0 to 2. Their sids follow the voters'.
	Observers int

	// TickTime is the basic time unit (default 2 s, as zoo.cfg's tickTime).
	TickTime clock.Duration
	// InitLimit is how many ticks discovery and synchronization may take (default 10).
	InitLimit int
	// SyncLimit is how many ticks a learner may lag behind the leader (default 5).
	SyncLimit int
	// MinSessionTimeout and MaxSessionTimeout bound negotiated session timeouts (defaults 2 and 20
	// ticks).
	MinSessionTimeout, MaxSessionTimeout clock.Duration

	// CommitLogCount is the size of the committed-log window a leader uses for DIFF sync
	// (zookeeper.commitLogCount, default 500).
	CommitLogCount int
	// SnapCount is the number of transactions between snapshots (zookeeper.snapCount). ZooKeeper's
	// default is 100,000; a simulation that wants SNAP syncs and snapshot restores to happen sets it
	// lower. The effective threshold is randomized as SyncRequestProcessor randomizes it.
	SnapCount int
	// SnapshotSizeFactor enables DIFF sync from the on-disk txn log when the log needed is smaller
	// than this fraction of the snapshot (zookeeper.snapshotSizeFactor, default 0.33); a negative
	// value disables txn-log sync, so that a learner behind the committed-log window gets a SNAP.
	SnapshotSizeFactor float64
	// ExtendedTypes enables TTL nodes (zookeeper.extendedTypesEnabled).
	ExtendedTypes bool
	// InitialZxidCounter, if positive, sets the counter of a new leader's first zxid, as the
	// zookeeper.testingonly.initialZxid property does; it lets a run reach the counter overflow of
	// ZOOKEEPER-1277 without billions of writes.
	InitialZxidCounter int64

	// FsyncLatencyMin and FsyncLatencyMax bound the time one fsync of the txn log takes (defaults
	// 1 ms and 10 ms), drawn from the world's Chooser.
	FsyncLatencyMin, FsyncLatencyMax clock.Duration

	// ContainerCheckInterval is how often the leader's (or a standalone server's) container
	// manager looks for empty containers and expired TTL nodes to delete
	// (znode.container.checkIntervalMs, default one minute).
	ContainerCheckInterval clock.Duration
	// ContainerMaxPerMinute bounds the deletes it submits (znode.container.maxPerMinute, default
	// 10000): one every minute / ContainerMaxPerMinute.
	ContainerMaxPerMinute int
	// ContainerMaxNeverUsed, if positive, also deletes a container that never had a child once it
	// is older than this (znode.container.maxNeverUsedIntervalMs, default 0: never).
	ContainerMaxNeverUsed clock.Duration

	// Bugs re-introduces real ZooKeeper bugs (see BugNames); none by default.
	Bugs Bugs
	// SelfTests breaks the server on purpose, for the harness's own tests (see SelfTest); none by
	// default. They are not part of the bug zoo.
	SelfTests SelfTests

	// Observer receives every protocol Event, for the white-box checkers. Optional.
	Observer Observer
}

// Config defaults.
const (
	DefaultTickTime           = 2 * clock.Second
	DefaultInitLimit          = 10
	DefaultSyncLimit          = 5
	DefaultCommitLogCount     = 500
	DefaultSnapCount          = 100_000
	DefaultSnapshotSizeFactor = 0.33
	DefaultFsyncLatencyMin    = clock.Millisecond
	DefaultFsyncLatencyMax    = 10 * clock.Millisecond

	DefaultContainerCheckInterval = clock.Minute
	DefaultContainerMaxPerMinute  = 10000
)

// MaxVoters is the largest ensemble zabsim simulates. ZooKeeper has no limit; seven voters already
// bear three failures, more than deployments run, and keep a run cheap.
const MaxVoters = 7

// ErrConfig marks configuration errors.
var ErrConfig = errors.New("zabmodel: invalid configuration")

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.TickTime == 0 {
		c.TickTime = DefaultTickTime
	}
	if c.InitLimit == 0 {
		c.InitLimit = DefaultInitLimit
	}
	if c.SyncLimit == 0 {
		c.SyncLimit = DefaultSyncLimit
	}
	if c.MinSessionTimeout == 0 {
		c.MinSessionTimeout = 2 * c.TickTime
	}
	if c.MaxSessionTimeout == 0 {
		c.MaxSessionTimeout = 20 * c.TickTime
	}
	if c.CommitLogCount == 0 {
		c.CommitLogCount = DefaultCommitLogCount
	}
	if c.SnapCount == 0 {
		c.SnapCount = DefaultSnapCount
	}
	if c.SnapshotSizeFactor == 0 {
		c.SnapshotSizeFactor = DefaultSnapshotSizeFactor
	}
	if c.ContainerCheckInterval == 0 {
		c.ContainerCheckInterval = DefaultContainerCheckInterval
	}
	if c.ContainerMaxPerMinute == 0 {
		c.ContainerMaxPerMinute = DefaultContainerMaxPerMinute
	}
	if c.FsyncLatencyMin == 0 && c.FsyncLatencyMax == 0 {
		c.FsyncLatencyMin, c.FsyncLatencyMax = DefaultFsyncLatencyMin, DefaultFsyncLatencyMax
	}
	return c
}

// Validate checks a configuration after defaults, naming every problem.
func (c Config) Validate() error {
	var problems []error
	bad := func(format string, args ...any) {
		problems = append(problems, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...))
	}
	if c.Voters < 1 || c.Voters > MaxVoters {
		bad("voters must be 1 to %d, not %d", MaxVoters, c.Voters)
	}
	if c.Observers < 0 || c.Observers > 2 {
		bad("observers must be 0 to 2, not %d", c.Observers)
	}
	if c.Voters == 1 && c.Observers > 0 {
		bad("a standalone server (1 voter) cannot have observers")
	}
	if c.TickTime < clock.Millisecond {
		bad("tickTime %v is below 1 ms", c.TickTime)
	}
	if c.InitLimit < 1 || c.SyncLimit < 1 {
		bad("initLimit (%d) and syncLimit (%d) must be at least 1", c.InitLimit, c.SyncLimit)
	}
	if c.MinSessionTimeout < c.TickTime || c.MaxSessionTimeout < c.MinSessionTimeout {
		bad("session timeouts must satisfy tickTime <= min (%v) <= max (%v)", c.MinSessionTimeout, c.MaxSessionTimeout)
	}
	if c.MaxSessionTimeout > clock.Duration(1<<31-1)*clock.Millisecond {
		bad("maxSessionTimeout %v does not fit a 32-bit millisecond count", c.MaxSessionTimeout)
	}
	if c.CommitLogCount < 1 {
		bad("commitLogCount must be at least 1, not %d", c.CommitLogCount)
	}
	if c.SnapCount < 2 {
		bad("snapCount must be at least 2, not %d", c.SnapCount)
	}
	if c.FsyncLatencyMin < 0 || c.FsyncLatencyMax < c.FsyncLatencyMin {
		bad("fsync latency bounds [%v, %v] make no sense", c.FsyncLatencyMin, c.FsyncLatencyMax)
	}
	if c.ContainerCheckInterval < clock.Millisecond || c.ContainerMaxPerMinute < 1 || c.ContainerMaxNeverUsed < 0 {
		bad("container manager: check interval %v must be at least 1 ms, max per minute %d at least 1, never-used interval %v not negative",
			c.ContainerCheckInterval, c.ContainerMaxPerMinute, c.ContainerMaxNeverUsed)
	}
	if c.InitialZxidCounter < 0 || c.InitialZxidCounter >= 0xffffffff {
		bad("initial zxid counter %#x is out of range", c.InitialZxidCounter)
	}
	if err := c.Bugs.Validate(ErrConfig); err != nil {
		problems = append(problems, err)
	}
	if err := c.SelfTests.Validate(ErrConfig); err != nil {
		problems = append(problems, err)
	}
	return errors.Join(problems...)
}

// Sids returns the voters' sids then the observers'.
func (c Config) Sids() []int64 {
	out := make([]int64, 0, c.Voters+c.Observers)
	for i := 1; i <= c.Voters+c.Observers; i++ {
		out = append(out, int64(i))
	}
	return out
}

// VoterSids returns the voters' sids.
func (c Config) VoterSids() []int64 { return c.Sids()[:c.Voters] }

// IsVoter reports whether sid is a participant.
func (c Config) IsVoter(sid int64) bool { return sid >= 1 && sid <= int64(c.Voters) }

// Quorum is QuorumMaj.containsQuorum (see internal/quorum): whether the set of sids is larger than
// half the voters, rounded down, so that 2 of 4 voters are not a quorum and 3 are. Like
// the Java, it counts the ids it is given, observers included ("Assumes that ackSet contains acks
// only from votingMembers"): every caller filters out observers itself, as Leader's isParticipant
// and SyncedLearnerTracker.addAck do, so that a caller that forgets to is a possible bug, as in
// ZooKeeper. A sid given twice counts once (the Java's argument is a Set).
func (c Config) Quorum(sids []int64) bool {
	n := 0
	for i, s := range sids {
		if !slices.Contains(sids[:i], s) {
			n++
		}
	}
	return quorum.Majority(c.Voters).Contains(n)
}

func (c Config) ticks(n int) clock.Duration { return clock.Duration(n) * c.TickTime }
