package lock

import (
	"fmt"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
)

// checkOrphans finds lock nodes that outlived the session that created them: once a session's
// closeSession commits, no node it created for a lock may remain, or the lock stays blocked by a
// holder that no longer exists. (An ephemeral node dies with its session; a persistent one does not.)
func checkOrphans(h *History, t *lockTree, _ Options) checkers.Result {
	col := newCollector(CheckerOrphans)
	for _, n := range t.nodes {
		end, closed := t.closes[n.owner]
		if !closed || (n.deleted != 0 && n.deleted <= end.zxid) {
			continue
		}
		fate := fmt.Sprintf("it was still there when the run ended at %s", ts(h.End))
		if n.deleted != 0 {
			fate = fmt.Sprintf("it was deleted only at %s (zxid %s)", ts(n.deletedAt), hexID(n.deleted))
		}
		kind := "persistent"
		if n.ephemeral {
			kind = "ephemeral"
		}
		col.add(checkers.Finding{
			Rule: "node-outlives-session",
			Message: fmt.Sprintf("%s: the %s lock node %s (token %s), created at %s by session %s, outlived that session, whose end committed at %s (zxid %s); %s",
				n.lock, kind, n.path, hexID(n.czxid), ts(n.created), hexID(n.owner), ts(end.at), hexID(end.zxid), fate),
			Sessions: []int64{n.owner},
			Zxids:    []int64{n.czxid, end.zxid},
			Times:    []clock.Time{n.created, end.at},
		})
	}
	return col.result(len(t.nodes), fmt.Sprintf("%d lock nodes judged against the end of their sessions", len(t.nodes)))
}
