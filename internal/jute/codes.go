package jute

import "strconv"

// Code is one of ZooKeeper's numeric error codes (KeeperException.Code).
// These values are the protocol: never invent new ones on the wire.
type Code int32

// The error codes of Apache ZooKeeper 3.9.
const (
	OK                           Code = 0
	SystemError                  Code = -1
	RuntimeInconsistency         Code = -2
	DataInconsistency            Code = -3
	ConnectionLoss               Code = -4
	MarshallingError             Code = -5
	Unimplemented                Code = -6
	OperationTimeout             Code = -7
	BadArguments                 Code = -8
	UnknownSession               Code = -12
	NewConfigNoQuorum            Code = -13
	ReconfigInProgress           Code = -14
	APIError                     Code = -100
	NoNode                       Code = -101
	NoAuth                       Code = -102
	BadVersion                   Code = -103
	NoChildrenForEphemerals      Code = -108
	NodeExists                   Code = -110
	NotEmpty                     Code = -111
	SessionExpired               Code = -112
	InvalidCallback              Code = -113
	InvalidACL                   Code = -114
	AuthFailed                   Code = -115
	SessionMoved                 Code = -118
	NotReadOnly                  Code = -119
	EphemeralOnLocalSession      Code = -120
	NoWatcher                    Code = -121
	RequestTimeout               Code = -122
	ReconfigDisabled             Code = -123
	SessionClosedRequireSaslAuth Code = -124
	QuotaExceeded                Code = -125
	Throttled                    Code = -127
)

var codeNames = map[Code]string{
	OK:                           "OK",
	SystemError:                  "SystemError",
	RuntimeInconsistency:         "RuntimeInconsistency",
	DataInconsistency:            "DataInconsistency",
	ConnectionLoss:               "ConnectionLoss",
	MarshallingError:             "MarshallingError",
	Unimplemented:                "Unimplemented",
	OperationTimeout:             "OperationTimeout",
	BadArguments:                 "BadArguments",
	UnknownSession:               "UnknownSession",
	NewConfigNoQuorum:            "NewConfigNoQuorum",
	ReconfigInProgress:           "ReconfigInProgress",
	APIError:                     "APIError",
	NoNode:                       "NoNode",
	NoAuth:                       "NoAuth",
	BadVersion:                   "BadVersion",
	NoChildrenForEphemerals:      "NoChildrenForEphemerals",
	NodeExists:                   "NodeExists",
	NotEmpty:                     "NotEmpty",
	SessionExpired:               "SessionExpired",
	InvalidCallback:              "InvalidCallback",
	InvalidACL:                   "InvalidACL",
	AuthFailed:                   "AuthFailed",
	SessionMoved:                 "SessionMoved",
	NotReadOnly:                  "NotReadOnly",
	EphemeralOnLocalSession:      "EphemeralOnLocalSession",
	NoWatcher:                    "NoWatcher",
	RequestTimeout:               "RequestTimeout",
	ReconfigDisabled:             "ReconfigDisabled",
	SessionClosedRequireSaslAuth: "SessionClosedRequireSaslAuth",
	QuotaExceeded:                "QuotaExceeded",
	Throttled:                    "Throttled",
}

func (c Code) String() string {
	if s, ok := codeNames[c]; ok {
		return s
	}
	return "Code(" + strconv.Itoa(int(c)) + ")"
}

// Error makes a non-OK Code usable as a Go error; errors.Is compares codes.
func (c Code) Error() string { return "zookeeper: " + c.String() }

// Op is a request opcode (ZooDefs.OpCode).
type Op int32

// The opcodes of Apache ZooKeeper 3.9.
const (
	OpNotification         Op = 0
	OpCreate               Op = 1
	OpDelete               Op = 2
	OpExists               Op = 3
	OpGetData              Op = 4
	OpSetData              Op = 5
	OpGetACL               Op = 6
	OpSetACL               Op = 7
	OpGetChildren          Op = 8
	OpSync                 Op = 9
	OpPing                 Op = 11
	OpGetChildren2         Op = 12
	OpCheck                Op = 13
	OpMulti                Op = 14
	OpCreate2              Op = 15
	OpReconfig             Op = 16
	OpCheckWatches         Op = 17
	OpRemoveWatches        Op = 18
	OpCreateContainer      Op = 19
	OpDeleteContainer      Op = 20
	OpCreateTTL            Op = 21
	OpMultiRead            Op = 22
	OpAuth                 Op = 100
	OpSetWatches           Op = 101
	OpSASL                 Op = 102
	OpGetEphemerals        Op = 103
	OpGetAllChildrenNumber Op = 104
	OpSetWatches2          Op = 105
	OpAddWatch             Op = 106
	OpWhoAmI               Op = 107
	OpCreateSession        Op = -10
	OpCloseSession         Op = -11
	OpError                Op = -1
)

var opNames = map[Op]string{
	OpNotification: "notification", OpCreate: "create", OpDelete: "delete",
	OpExists: "exists", OpGetData: "getData", OpSetData: "setData",
	OpGetACL: "getACL", OpSetACL: "setACL", OpGetChildren: "getChildren",
	OpSync: "sync", OpPing: "ping", OpGetChildren2: "getChildren2",
	OpCheck: "check", OpMulti: "multi", OpCreate2: "create2",
	OpReconfig: "reconfig", OpCheckWatches: "checkWatches",
	OpRemoveWatches: "removeWatches", OpCreateContainer: "createContainer",
	OpDeleteContainer: "deleteContainer", OpCreateTTL: "createTTL",
	OpMultiRead: "multiRead", OpAuth: "auth", OpSetWatches: "setWatches",
	OpSASL: "sasl", OpGetEphemerals: "getEphemerals",
	OpGetAllChildrenNumber: "getAllChildrenNumber", OpSetWatches2: "setWatches2",
	OpAddWatch: "addWatch", OpWhoAmI: "whoAmI", OpCreateSession: "createSession",
	OpCloseSession: "closeSession", OpError: "error",
}

func (o Op) String() string {
	if s, ok := opNames[o]; ok {
		return s
	}
	return "op(" + strconv.Itoa(int(o)) + ")"
}

// Special xids.
const (
	XidNotification int32 = -1
	XidPing         int32 = -2
	XidAuth         int32 = -4
	XidSetWatches   int32 = -8
)

// Permission bits of an ACL (ZooDefs.Perms).
const (
	PermRead   int32 = 1 << 0
	PermWrite  int32 = 1 << 1
	PermCreate int32 = 1 << 2
	PermDelete int32 = 1 << 3
	PermAdmin  int32 = 1 << 4
	PermAll    int32 = PermRead | PermWrite | PermCreate | PermDelete | PermAdmin
)

// Create flags (CreateMode.toFlag()).
const (
	FlagPersistent                  int32 = 0
	FlagEphemeral                   int32 = 1
	FlagPersistentSequential        int32 = 2
	FlagEphemeralSequential         int32 = 3
	FlagContainer                   int32 = 4
	FlagPersistentWithTTL           int32 = 5
	FlagPersistentSequentialWithTTL int32 = 6
)

// Watcher event types (Watcher.Event.EventType).
const (
	EventNone                   int32 = -1
	EventNodeCreated            int32 = 1
	EventNodeDeleted            int32 = 2
	EventNodeDataChanged        int32 = 3
	EventNodeChildrenChanged    int32 = 4
	EventDataWatchRemoved       int32 = 5
	EventChildWatchRemoved      int32 = 6
	EventPersistentWatchRemoved int32 = 7
)

// Keeper states (Watcher.Event.KeeperState) carried in WatcherEvent.State.
const (
	StateDisconnected      int32 = 0
	StateSyncConnected     int32 = 3
	StateAuthFailed        int32 = 4
	StateConnectedReadOnly int32 = 5
	StateSASLAuthenticated int32 = 6
	StateExpired           int32 = -112
	StateClosed            int32 = 7
)

// Watcher types of removeWatches/checkWatches (Watcher.WatcherType).
const (
	WatcherChildren int32 = 1
	WatcherData     int32 = 2
	WatcherAny      int32 = 3
)

// addWatch modes (AddWatchMode).
const (
	AddWatchPersistent          int32 = 0
	AddWatchPersistentRecursive int32 = 1
)
