package client

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

func TestAuthIsSentAndResentFirstAfterReconnect(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	s := bed.servers[0]
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	bed.run(10 * ms)
	require.NoError(t, c.AddAuth("digest", []byte("alice:pw"), log.result("auth alice")))
	require.NoError(t, c.AddAuth("digest", []byte("bob:pw"), log.result("auth bob")))
	require.NoError(t, c.GetData("/a", log.watcher("w"), nil))
	bed.run(10 * ms)
	got := s.last().nonPing()
	require.Len(t, got, 3)
	assert.Equal(t, proto.RequestHeader{Xid: proto.AuthXid, Type: proto.OpAuth}, got[0].header)
	assert.Equal(t, &proto.AuthPacket{Type: 0, Scheme: "digest", Auth: []byte("alice:pw")}, got[0].body)
	assert.Equal(t, int32(1), got[2].header.Xid, "auth packets take no xid")
	assert.Equal(t, []string{"default: None SyncConnected ", "auth alice: OK", "auth bob: OK"}, log.entries)

	s.last().close()
	bed.run(150 * ms)
	require.NoError(t, c.Sync("/", nil))
	bed.run(2 * clock.Second)
	require.Len(t, s.conns, 2)
	got = s.last().nonPing()
	var order []string
	for _, r := range got {
		switch body := r.body.(type) {
		case *proto.AuthPacket:
			order = append(order, "auth "+string(body.Auth))
		default:
			order = append(order, r.header.Type.String())
		}
	}
	// primeConnection pushes each credential to the front in turn, so they go out in reverse order,
	// all before the watch re-registration and the queued requests.
	assert.Equal(t, []string{"auth bob:pw", "auth alice:pw", "setWatches", "sync"}, order)
	assert.Len(t, log.matching("auth"), 2, "re-sent credentials report to nobody")
}

func TestAuthFailureKillsTheClient(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	s := bed.servers[0]
	s.onAuth = func(fc *fakeConn, h proto.RequestHeader, body *proto.AuthPacket) {
		fc.reply(proto.ReplyHeader{Xid: proto.AuthXid, Err: proto.AuthFailed}, nil)
		fc.close()
	}
	s.onRequest = func(*fakeConn, proto.RequestHeader, proto.Record) {} // holds every request
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	bed.run(10 * ms)
	require.NoError(t, c.Exists("/a", nil, func(r StatResult) { log.add("exists: " + r.Err.String()) }))
	require.NoError(t, c.AddAuth("nosuch", []byte("x"), log.result("auth")))
	bed.run(3 * ms)
	assert.Equal(t, StateAuthFailed, c.State())
	bed.run(2 * clock.Second)
	assert.Equal(t, []string{
		"default: None SyncConnected ",
		"default: None AuthFailed ",
		"auth: AUTHFAILED",
		"exists: AUTHFAILED",
	}, log.entries, "no Disconnected and no Closed: the event thread died with AuthFailed")
	assert.Len(t, s.conns, 1, "no reconnection")
	require.NoError(t, c.Sync("/", log.result("sync")))
	require.NoError(t, c.AddAuth("digest", []byte("u:p"), log.result("auth again")))
	bed.run(ms)
	assert.Equal(t, []string{"sync: AUTHFAILED", "auth again: AUTHFAILED"}, log.entries[4:])
}
