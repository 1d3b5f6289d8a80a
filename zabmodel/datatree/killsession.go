package datatree

// KillSession is ZKDatabase.killSession, which a new leader calls from loadData for every session
// that still owns ephemeral nodes but is no longer in the session table: the session's ephemerals are
// deleted at zxid, outside any txn, and their watches fire.
func (t *Tree) KillSession(session, zxid int64) error {
	return t.killSession(session, zxid, nil, false)
}
