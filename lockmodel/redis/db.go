package redis

import (
	"crypto/sha1"
	"encoding/hex"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The lock scripts, run with EVAL or EVALSHA. The simulated server does not interpret Lua: it knows
// these two texts by their SHA-1 (what EVALSHA names a script by) and applies their effect, which
// is what a script's atomic execution amounts to. They are the compare-and-delete script of the
// SET command's documentation (redis.io, "Patterns") and its compare-and-extend twin, as every
// Redis lock library ships them (redsync's deleteScript and touchScript do the same).
const (
	// ScriptCompareAndDelete deletes KEYS[1] if it holds ARGV[1]: 1 if it did, 0 otherwise.
	ScriptCompareAndDelete = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`
	// ScriptCompareAndExtend sets KEYS[1]'s time to live to ARGV[2] ms if it holds ARGV[1]: 1 if it
	// did, 0 otherwise.
	ScriptCompareAndExtend = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) else return 0 end`
)

// ScriptSHA returns a script's SHA-1 in hex, as SCRIPT LOAD returns it and EVALSHA takes it.
func ScriptSHA(script string) string {
	sum := sha1.Sum([]byte(script))
	return hex.EncodeToString(sum[:])
}

var (
	shaCompareAndDelete = ScriptSHA(ScriptCompareAndDelete)
	shaCompareAndExtend = ScriptSHA(ScriptCompareAndExtend)
)

// entry is one key: a string value and its absolute expiry in Unix milliseconds (-1: none), as
// Redis keeps it in db->expires.
type entry struct {
	value    string
	expireAt int64
}

// DB is one server's keyspace and the semantics of the commands the simulated Redis serves. It is
// a plain value: the server feeds it the command and its own wall clock, in milliseconds, and it
// returns the reply and the commands to propagate (to the replicas and the AOF), in the absolute
// form Redis 7 propagates them: SET ... PXAT, PEXPIREAT, DEL for an expiry and a script's effects.
//
// Expiry follows Redis 7.0's src/db.c: keyIsExpired compares the key's absolute expiry with the
// command's time snapshot (server.mstime, read from mstime(), that is gettimeofday: the wall clock,
// so that a wall-clock step moves every expiry) and calls it expired when now > when; a master
// deletes an expired key when a command touches it (expireIfNeeded) and propagates a DEL, while a
// replica never expires a key itself: it answers as if the key were gone (since 3.2) and waits for
// the master's DEL. The active expiry cycle is the server's (see Server).
type DB struct {
	keys map[string]*entry
	// loaded holds the SHA-1s of the scripts this server has seen (EVAL or SCRIPT LOAD), which
	// EVALSHA needs; it is emptied by a restart, as the real script cache is.
	loaded map[string]bool
	// replica: the keyspace is a replica's (no expiry of its own, no writes from clients).
	replica bool
}

// NewDB returns an empty keyspace.
func NewDB() *DB { return &DB{keys: map[string]*entry{}, loaded: map[string]bool{}} }

// Len returns the number of keys, expired or not.
func (d *DB) Len() int { return len(d.keys) }

// sortedKeys lists the keys in order, so that nothing a map's order decides reaches a message.
func (d *DB) sortedKeys() []string {
	out := make([]string, 0, len(d.keys))
	for k := range d.keys { // determinism:ok sorted below
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Snapshot returns the commands that rebuild the keyspace (a full resynchronisation's payload, an
// AOF rewrite), in key order, with absolute expiries.
func (d *DB) Snapshot() [][]string {
	var out [][]string
	for _, k := range d.sortedKeys() {
		e := d.keys[k]
		cmd := []string{"SET", k, e.value}
		if e.expireAt >= 0 {
			cmd = append(cmd, "PXAT", strconv.FormatInt(e.expireAt, 10))
		}
		out = append(out, cmd)
	}
	return out
}

// Reset empties the keyspace (FLUSHALL, or the start of a full resynchronisation).
func (d *DB) Reset() { clear(d.keys) }

// expired reports whether e is logically expired at now (keyIsExpired: strictly after).
func expired(e *entry, now int64) bool { return e.expireAt >= 0 && now > e.expireAt }

// lookup returns the live entry of key, expiring it first if it is due (expireIfNeeded). A master
// deletes it and propagates the deletion; a replica answers as if it were gone.
func (d *DB) lookup(key string, now int64, prop *[][]string) *entry {
	e, ok := d.keys[key]
	if !ok {
		return nil
	}
	if !expired(e, now) {
		return e
	}
	if !d.replica {
		delete(d.keys, key)
		*prop = append(*prop, []string{"DEL", key})
	}
	return nil
}

// ExpireDue deletes every key due at now and returns the DELs to propagate: the active expiry
// cycle (activeExpireCycle samples keys with an expiry ten times a second; with the few keys of
// a lock every key is sampled). A replica expires nothing.
func (d *DB) ExpireDue(now int64) [][]string {
	if d.replica {
		return nil
	}
	var prop [][]string
	for _, k := range d.sortedKeys() {
		if expired(d.keys[k], now) {
			delete(d.keys, k)
			prop = append(prop, []string{"DEL", k})
		}
	}
	return prop
}

// Errors, worded as Redis 7.0 words them.
const (
	errSyntax      = "ERR syntax error"
	errNotInteger  = "ERR value is not an integer or out of range"
	errOverflow    = "ERR increment or decrement would overflow"
	errNoScript    = "NOSCRIPT No matching script. Please use EVAL."
	errReadOnly    = "READONLY You can't write against a read only replica."
	errUnknownFmt  = "ERR unknown command '%s'"
	errArityFormat = "ERR wrong number of arguments for '%s' command"
)

func arityError(name string) Reply {
	return errorReply(strings.Replace(errArityFormat, "%s", strings.ToLower(name), 1))
}

// writeCommands are refused on a replica.
var writeCommands = []string{"SET", "DEL", "PEXPIRE", "PEXPIREAT", "INCR", "EVAL", "EVALSHA", "FLUSHALL"}

// Exec runs one client command at wall-clock time now (Unix ms) and returns its reply and the
// commands it propagates.
func (d *DB) Exec(args []string, now int64) (Reply, [][]string) {
	if len(args) == 0 {
		return errorReply("ERR empty command"), nil
	}
	name := strings.ToUpper(args[0])
	if d.replica && slices.Contains(writeCommands, name) {
		return errorReply(errReadOnly), nil
	}
	var prop [][]string
	rep := d.exec(name, args, now, &prop)
	return rep, prop
}

// Apply runs a propagated command (from the master's stream or the AOF) without expiring anything
// first: Redis applies the master's commands as they come (server.loading or the master client).
func (d *DB) Apply(args []string) {
	if len(args) == 0 {
		return
	}
	switch strings.ToUpper(args[0]) {
	case "SET":
		e := &entry{value: args[2], expireAt: -1}
		if len(args) == 5 {
			e.expireAt, _ = strconv.ParseInt(args[4], 10, 64)
		}
		d.keys[args[1]] = e
	case "DEL":
		for _, k := range args[1:] {
			delete(d.keys, k)
		}
	case "PEXPIREAT":
		if e, ok := d.keys[args[1]]; ok {
			e.expireAt, _ = strconv.ParseInt(args[2], 10, 64)
		}
	case "INCR":
		e, ok := d.keys[args[1]]
		if !ok {
			e = &entry{value: "0", expireAt: -1}
			d.keys[args[1]] = e
		}
		v, _ := strconv.ParseInt(e.value, 10, 64)
		e.value = strconv.FormatInt(v+1, 10)
	case "FLUSHALL":
		d.Reset()
	}
}

func (d *DB) exec(name string, args []string, now int64, prop *[][]string) Reply {
	switch name {
	case "PING":
		if len(args) > 2 {
			return arityError(name)
		}
		if len(args) == 2 {
			return bulkReply(args[1])
		}
		return Reply{Kind: KindStatus, Str: "PONG"}
	case "GET":
		if len(args) != 2 {
			return arityError(name)
		}
		if e := d.lookup(args[1], now, prop); e != nil {
			return bulkReply(e.value)
		}
		return replyNil
	case "SET":
		return d.set(args, now, prop)
	case "DEL":
		if len(args) < 2 {
			return arityError(name)
		}
		n := int64(0)
		for _, k := range args[1:] {
			if d.lookup(k, now, prop) != nil {
				delete(d.keys, k)
				*prop = append(*prop, []string{"DEL", k})
				n++
			}
		}
		return intReply(n)
	case "PEXPIRE", "PEXPIREAT":
		if len(args) != 3 {
			return arityError(name)
		}
		ms, err := strconv.ParseInt(args[2], 10, 64)
		if err != nil {
			return errorReply(errNotInteger)
		}
		at := ms
		if name == "PEXPIRE" {
			at = now + ms
		}
		return d.expire(args[1], at, now, prop)
	case "PTTL":
		if len(args) != 2 {
			return arityError(name)
		}
		e := d.lookup(args[1], now, prop)
		switch {
		case e == nil:
			return intReply(-2)
		case e.expireAt < 0:
			return intReply(-1)
		}
		return intReply(max(e.expireAt-now, 0))
	case "INCR":
		if len(args) != 2 {
			return arityError(name)
		}
		return d.incr(args[1], now, prop)
	case "EVAL", "EVALSHA":
		return d.eval(name, args, now, prop)
	case "SCRIPT":
		if len(args) != 3 || !strings.EqualFold(args[1], "LOAD") {
			return errorReply("ERR the simulated Redis models only SCRIPT LOAD")
		}
		sha := ScriptSHA(args[2])
		d.loaded[sha] = true
		return bulkReply(sha)
	case "FLUSHALL":
		d.Reset()
		*prop = append(*prop, []string{"FLUSHALL"})
		return replyOK
	}
	return errorReply(strings.Replace(errUnknownFmt, "%s", args[0], 1))
}

// set is SET key value [NX|XX] [PX ms|EX s|PXAT ms|KEEPTTL], the subset locks use, with Redis
// 7.0's argument checks (t_string.c parseExtendedStringArgumentsOrReply, getExpireMillisecondsOrReply).
func (d *DB) set(args []string, now int64, prop *[][]string) Reply {
	if len(args) < 3 {
		return arityError("SET")
	}
	key, value := args[1], args[2]
	var nx, xx, keepTTL, hasExpire bool
	expireAt := int64(-1)
	for i := 3; i < len(args); i++ {
		switch opt := strings.ToUpper(args[i]); {
		case opt == "NX" && !xx:
			nx = true
		case opt == "XX" && !nx:
			xx = true
		case opt == "KEEPTTL" && !hasExpire:
			keepTTL = true
		case (opt == "PX" || opt == "EX" || opt == "PXAT") && !hasExpire && !keepTTL && i+1 < len(args):
			i++
			v, err := strconv.ParseInt(args[i], 10, 64)
			if err != nil {
				return errorReply(errNotInteger)
			}
			if v <= 0 || (opt == "EX" && v > math.MaxInt64/1000) {
				return errorReply("ERR invalid expire time in 'set' command")
			}
			switch opt {
			case "PX":
				expireAt = now + v
			case "EX":
				expireAt = now + v*1000
			default:
				expireAt = v
			}
			hasExpire = true
		default:
			return errorReply(errSyntax)
		}
	}
	old := d.lookup(key, now, prop)
	if (nx && old != nil) || (xx && old == nil) {
		return replyNil
	}
	e := &entry{value: value, expireAt: expireAt}
	if keepTTL && old != nil {
		e.expireAt = old.expireAt
	}
	d.keys[key] = e
	cmd := []string{"SET", key, value}
	if e.expireAt >= 0 {
		cmd = append(cmd, "PXAT", strconv.FormatInt(e.expireAt, 10))
	}
	*prop = append(*prop, cmd)
	return replyOK
}

// expire sets key's absolute expiry: a time already past deletes the key (expireGenericCommand
// checks checkAlreadyExpired and deletes instead).
func (d *DB) expire(key string, at, now int64, prop *[][]string) Reply {
	e := d.lookup(key, now, prop)
	if e == nil {
		return intReply(0)
	}
	if at <= now {
		delete(d.keys, key)
		*prop = append(*prop, []string{"DEL", key})
		return intReply(1)
	}
	e.expireAt = at
	*prop = append(*prop, []string{"PEXPIREAT", key, strconv.FormatInt(at, 10)})
	return intReply(1)
}

// incr keeps the key's time to live, as INCR does.
func (d *DB) incr(key string, now int64, prop *[][]string) Reply {
	e := d.lookup(key, now, prop)
	v := int64(0)
	if e != nil {
		var err error
		if v, err = strconv.ParseInt(e.value, 10, 64); err != nil || strconv.FormatInt(v, 10) != e.value {
			return errorReply(errNotInteger)
		}
		if v == math.MaxInt64 {
			return errorReply(errOverflow)
		}
	} else {
		e = &entry{expireAt: -1}
		d.keys[key] = e
	}
	e.value = strconv.FormatInt(v+1, 10)
	*prop = append(*prop, []string{"INCR", key})
	return intReply(v + 1)
}

// eval runs one of the two lock scripts by effect. Redis 7 replicates a script by its effects
// (the commands it called), which is what prop receives.
func (d *DB) eval(name string, args []string, now int64, prop *[][]string) Reply {
	if len(args) < 3 {
		return arityError(name)
	}
	sha := strings.ToLower(args[1])
	if name == "EVAL" {
		sha = ScriptSHA(args[1])
	} else if !d.loaded[sha] {
		return errorReply(errNoScript)
	}
	numKeys, err := strconv.Atoi(args[2])
	if err != nil {
		return errorReply(errNotInteger)
	}
	if numKeys < 0 || numKeys > len(args)-3 {
		return errorReply("ERR Number of keys can't be greater than number of args")
	}
	keys, argv := args[3:3+numKeys], args[3+numKeys:]
	switch sha {
	case shaCompareAndDelete, shaCompareAndExtend:
	default:
		return errorReply("ERR the simulated Redis runs only the lock scripts (ScriptCompareAndDelete, ScriptCompareAndExtend)")
	}
	d.loaded[sha] = true
	if len(keys) != 1 || len(argv) < 1 || (sha == shaCompareAndExtend && len(argv) < 2) {
		return errorReply("ERR the lock scripts take one key and their arguments")
	}
	e := d.lookup(keys[0], now, prop)
	if e == nil || e.value != argv[0] {
		return intReply(0)
	}
	if sha == shaCompareAndDelete {
		delete(d.keys, keys[0])
		*prop = append(*prop, []string{"DEL", keys[0]})
		return intReply(1)
	}
	ms, err := strconv.ParseInt(argv[1], 10, 64)
	if err != nil {
		// redis.call("pexpire") raises the error, which EVAL returns with the script's context;
		// the lock clients never send it.
		return errorReply(errNotInteger)
	}
	return d.expire(keys[0], now+ms, now, prop)
}
