package realzk

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"

	"github.com/go-zookeeper/zk"

	"github.com/zabsim/zabsim/scenarios/conform"
)

// zkErrorCodes maps go-zookeeper's error values back to ZooKeeper codes.
// go-zookeeper decodes a server error number into one of these values, or,
// for numbers it does not know (RUNTIMEINCONSISTENCY, UNIMPLEMENTED, ...),
// into an error "unknown error: N" that codeOf parses.
var zkErrorCodes = map[error]conform.Code{
	zk.ErrAPIError:                conform.CodeAPIError,
	zk.ErrNoNode:                  conform.CodeNoNode,
	zk.ErrNoAuth:                  conform.CodeNoAuth,
	zk.ErrBadVersion:              conform.CodeBadVersion,
	zk.ErrNoChildrenForEphemerals: conform.CodeNoChildrenForEphemerals,
	zk.ErrNodeExists:              conform.CodeNodeExists,
	zk.ErrNotEmpty:                conform.CodeNotEmpty,
	zk.ErrSessionExpired:          conform.CodeSessionExpired,
	zk.ErrInvalidACL:              conform.CodeInvalidACL,
	zk.ErrAuthFailed:              conform.CodeAuthFailed,
	zk.ErrSessionMoved:            conform.CodeSessionMoved,
	zk.ErrReconfigDisabled:        conform.CodeReconfigDisabled,
	zk.ErrBadArguments:            conform.CodeBadArguments,
	zk.ErrInvalidPath:             conform.CodeInvalidPath,
}

// unknownErrorPrefix is how go-zookeeper renders a server error number it
// has no value for (ErrCode.toError).
const unknownErrorPrefix = "unknown error: "

// codeOf maps an error of a go-zookeeper call to a result code. Errors that
// are no outcome of the operation (a harness bug, a flag the runner should
// never send) are returned as errors.
func codeOf(err error) (conform.Code, error) {
	if err == nil {
		return conform.CodeOK, nil
	}
	if code, ok := zkErrorCodes[err]; ok {
		return code, nil
	}
	if isConnectionLoss(err) {
		return conform.CodeConnectionLoss, nil
	}
	if number, ok := strings.CutPrefix(err.Error(), unknownErrorPrefix); ok {
		n, parseErr := strconv.ParseInt(number, 10, 32)
		if parseErr == nil {
			return conform.CodeFromNumber(int32(n)), nil
		}
	}
	return "", fmt.Errorf("unmapped client error: %w", err)
}

// isConnectionLoss reports whether err means the request may not have
// reached the server or its reply was lost: go-zookeeper's own connection
// errors, and socket errors its send path returns as they are.
func isConnectionLoss(err error) bool {
	var netErr net.Error
	var errno syscall.Errno
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, zk.ErrClosing) || errors.Is(err, io.EOF) ||
		errors.As(err, &netErr) || errors.As(err, &errno)
}
