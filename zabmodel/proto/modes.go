package proto

import "fmt"

// CreateMode is the kind of node a create makes, org.apache.zookeeper.CreateMode.
// Its value is the flag carried in CreateRequest.Flags.
type CreateMode int32

// The create modes, with their flag values.
const (
	Persistent                  CreateMode = 0
	Ephemeral                   CreateMode = 1
	PersistentSequential        CreateMode = 2
	EphemeralSequential         CreateMode = 3
	Container                   CreateMode = 4
	PersistentWithTTL           CreateMode = 5
	PersistentSequentialWithTTL CreateMode = 6
)

var createModeNames = []nameRow[CreateMode]{
	{Persistent, "PERSISTENT"},
	{Ephemeral, "EPHEMERAL"},
	{PersistentSequential, "PERSISTENT_SEQUENTIAL"},
	{EphemeralSequential, "EPHEMERAL_SEQUENTIAL"},
	{Container, "CONTAINER"},
	{PersistentWithTTL, "PERSISTENT_WITH_TTL"},
	{PersistentSequentialWithTTL, "PERSISTENT_SEQUENTIAL_WITH_TTL"},
}

// String returns the Java enum name, such as EPHEMERAL_SEQUENTIAL.
func (m CreateMode) String() string { return formatName(createModeNames, m, "CreateMode") }

// ParseCreateMode is the inverse of String.
func ParseCreateMode(name string) (CreateMode, error) {
	return parseName(createModeNames, name, "CreateMode")
}

// CreateModeFromFlag converts a wire flag as CreateMode.fromFlag(int) does. An
// unknown flag is an error that wraps BadArguments, the code the Java method
// throws (KeeperException.BadArgumentsException).
func CreateModeFromFlag(flag int32) (CreateMode, error) {
	m := CreateMode(flag)
	if m < Persistent || m > PersistentSequentialWithTTL {
		return 0, fmt.Errorf("%w: Received an invalid flag value: %d to convert to a CreateMode", BadArguments, flag)
	}
	return m, nil
}

// IsEphemeral reports whether the node is owned by the creating session.
func (m CreateMode) IsEphemeral() bool { return m == Ephemeral || m == EphemeralSequential }

// IsSequential reports whether the server appends a 10-digit counter to the
// name.
func (m CreateMode) IsSequential() bool {
	return m == PersistentSequential || m == EphemeralSequential || m == PersistentSequentialWithTTL
}

// IsContainer reports whether the node is a container, which the server
// deletes once its last child is gone.
func (m CreateMode) IsContainer() bool { return m == Container }

// IsTTL reports whether the node expires after a time to live.
func (m CreateMode) IsTTL() bool { return m == PersistentWithTTL || m == PersistentSequentialWithTTL }

// EventType is the type of a watch notification, Watcher.Event.EventType.
type EventType int32

// The event types.
const (
	EventNone                   EventType = -1
	EventNodeCreated            EventType = 1
	EventNodeDeleted            EventType = 2
	EventNodeDataChanged        EventType = 3
	EventNodeChildrenChanged    EventType = 4
	EventDataWatchRemoved       EventType = 5
	EventChildWatchRemoved      EventType = 6
	EventPersistentWatchRemoved EventType = 7
)

var eventTypeNames = []nameRow[EventType]{
	{EventNone, "None"},
	{EventNodeCreated, "NodeCreated"},
	{EventNodeDeleted, "NodeDeleted"},
	{EventNodeDataChanged, "NodeDataChanged"},
	{EventNodeChildrenChanged, "NodeChildrenChanged"},
	{EventDataWatchRemoved, "DataWatchRemoved"},
	{EventChildWatchRemoved, "ChildWatchRemoved"},
	{EventPersistentWatchRemoved, "PersistentWatchRemoved"},
}

// String returns the Java enum name, such as NodeCreated.
func (t EventType) String() string { return formatName(eventTypeNames, t, "EventType") }

// KeeperState is the connection state a notification reports,
// Watcher.Event.KeeperState. Events from the server always carry
// StateSyncConnected; the others are produced by the client library.
type KeeperState int32

// The keeper states. StateUnknown and StateNoSyncConnected are deprecated in
// Java but still accepted by KeeperState.fromInt.
const (
	StateUnknown           KeeperState = -1
	StateDisconnected      KeeperState = 0
	StateNoSyncConnected   KeeperState = 1
	StateSyncConnected     KeeperState = 3
	StateAuthFailed        KeeperState = 4
	StateConnectedReadOnly KeeperState = 5
	StateSaslAuthenticated KeeperState = 6
	StateExpired           KeeperState = -112
	StateClosed            KeeperState = 7
)

var keeperStateNames = []nameRow[KeeperState]{
	{StateUnknown, "Unknown"},
	{StateDisconnected, "Disconnected"},
	{StateNoSyncConnected, "NoSyncConnected"},
	{StateSyncConnected, "SyncConnected"},
	{StateAuthFailed, "AuthFailed"},
	{StateConnectedReadOnly, "ConnectedReadOnly"},
	{StateSaslAuthenticated, "SaslAuthenticated"},
	{StateExpired, "Expired"},
	{StateClosed, "Closed"},
}

// String returns the Java enum name, such as SyncConnected.
func (s KeeperState) String() string { return formatName(keeperStateNames, s, "KeeperState") }

// WatcherType selects the watches that checkWatches and removeWatches act on,
// Watcher.WatcherType.
type WatcherType int32

// The watcher types.
const (
	WatcherChildren WatcherType = 1
	WatcherData     WatcherType = 2
	WatcherAny      WatcherType = 3
)

var watcherTypeNames = []nameRow[WatcherType]{
	{WatcherChildren, "Children"},
	{WatcherData, "Data"},
	{WatcherAny, "Any"},
}

// String returns the Java enum name, such as Children.
func (t WatcherType) String() string { return formatName(watcherTypeNames, t, "WatcherType") }

// AddWatchMode is the kind of persistent watch addWatch sets,
// org.apache.zookeeper.AddWatchMode (ZooDefs.AddWatchModes on the wire).
type AddWatchMode int32

// The add-watch modes.
const (
	AddWatchPersistent          AddWatchMode = 0
	AddWatchPersistentRecursive AddWatchMode = 1
)

var addWatchModeNames = []nameRow[AddWatchMode]{
	{AddWatchPersistent, "PERSISTENT"},
	{AddWatchPersistentRecursive, "PERSISTENT_RECURSIVE"},
}

// String returns the Java enum name, such as PERSISTENT_RECURSIVE.
func (m AddWatchMode) String() string { return formatName(addWatchModeNames, m, "AddWatchMode") }
