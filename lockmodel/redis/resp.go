package redis

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ReplyKind is the RESP2 type of a reply.
type ReplyKind uint8

// The reply kinds.
const (
	KindStatus  ReplyKind = iota + 1 // +OK
	KindError                        // -ERR ...
	KindInteger                      // :1
	KindBulk                         // $3\r\nfoo
	KindNil                          // $-1: the null bulk string
)

// Reply is one reply, as RESP2 carries it.
type Reply struct {
	Kind ReplyKind
	Str  string // the status, the error (without the '-') or the bulk string
	Int  int64
}

// Replies the commands share.
var (
	replyOK  = Reply{Kind: KindStatus, Str: "OK"}
	replyNil = Reply{Kind: KindNil}
)

func intReply(v int64) Reply       { return Reply{Kind: KindInteger, Int: v} }
func bulkReply(s string) Reply     { return Reply{Kind: KindBulk, Str: s} }
func errorReply(s string) Reply    { return Reply{Kind: KindError, Str: s} }
func (r Reply) IsError() bool      { return r.Kind == KindError }
func (r Reply) IsOK() bool         { return r.Kind == KindStatus && r.Str == "OK" }
func (r Reply) isInt(v int64) bool { return r.Kind == KindInteger && r.Int == v }

// String renders the reply as the golden files write it: +OK, -ERR ..., :5, $value, $nil.
func (r Reply) String() string {
	switch r.Kind {
	case KindStatus:
		return "+" + r.Str
	case KindError:
		return "-" + r.Str
	case KindInteger:
		return ":" + strconv.FormatInt(r.Int, 10)
	case KindBulk:
		return "$" + r.Str
	case KindNil:
		return "$nil"
	}
	return fmt.Sprintf("invalid-reply(%d)", r.Kind)
}

// maxArgs and maxBulk bound what a decoder accepts: far more than the lock commands need, far less
// than would let a bad message take the run's memory.
const (
	maxArgs = 1 << 10
	maxBulk = 1 << 20
)

// AppendCommand appends a command in RESP2, as an array of bulk strings (what redis-cli and every
// client library send).
func AppendCommand(b []byte, args ...string) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

// AppendReply appends a reply in RESP2.
func AppendReply(b []byte, r Reply) []byte {
	switch r.Kind {
	case KindStatus, KindError:
		if r.Kind == KindStatus {
			b = append(b, '+')
		} else {
			b = append(b, '-')
		}
		b = append(b, r.Str...)
	case KindInteger:
		b = append(b, ':')
		b = strconv.AppendInt(b, r.Int, 10)
	case KindBulk:
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(r.Str)), 10)
		b = append(b, '\r', '\n')
		b = append(b, r.Str...)
	default:
		b = append(b, "$-1"...)
	}
	return append(b, '\r', '\n')
}

// ReadCommand reads one command (an array of bulk strings).
func ReadCommand(r *bufio.Reader) ([]string, error) {
	line, err := readLine(r)
	if err != nil {
		return nil, err
	}
	if len(line) == 0 || line[0] != '*' {
		return nil, fmt.Errorf("redis: a command is an array, not %q", line)
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil || n < 1 || n > maxArgs {
		return nil, fmt.Errorf("redis: bad array length %q", line)
	}
	args := make([]string, n)
	for i := range args {
		rep, err := ReadReply(r)
		if err != nil {
			return nil, err
		}
		if rep.Kind != KindBulk {
			return nil, fmt.Errorf("redis: command argument %d is not a bulk string", i)
		}
		args[i] = rep.Str
	}
	return args, nil
}

// ReadReply reads one reply. Arrays are not needed by the lock commands and are refused.
func ReadReply(r *bufio.Reader) (Reply, error) {
	line, err := readLine(r)
	if err != nil {
		return Reply{}, err
	}
	if line == "" {
		return Reply{}, errors.New("redis: empty reply line")
	}
	switch body := line[1:]; line[0] {
	case '+':
		return Reply{Kind: KindStatus, Str: body}, nil
	case '-':
		return Reply{Kind: KindError, Str: body}, nil
	case ':':
		v, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			return Reply{}, fmt.Errorf("redis: bad integer reply %q", line)
		}
		return intReply(v), nil
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 || n > maxBulk {
			return Reply{}, fmt.Errorf("redis: bad bulk length %q", line)
		}
		if n == -1 {
			return replyNil, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return Reply{}, fmt.Errorf("redis: bulk string cut short: %w", err)
		}
		if buf[n] != '\r' || buf[n+1] != '\n' {
			return Reply{}, errors.New("redis: bulk string not terminated by CRLF")
		}
		return bulkReply(string(buf[:n])), nil
	}
	return Reply{}, fmt.Errorf("redis: unsupported reply type %q", line[0])
}

func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	if !strings.HasSuffix(line, "\r\n") {
		return "", fmt.Errorf("redis: line %q not terminated by CRLF", line)
	}
	return line[:len(line)-2], nil
}

// decodeCommand decodes one whole message holding one command.
func decodeCommand(b []byte) ([]string, error) {
	r := bufio.NewReader(strings.NewReader(string(b)))
	args, err := ReadCommand(r)
	if err == nil && r.Buffered() != 0 {
		err = fmt.Errorf("redis: %d bytes after the command", r.Buffered())
	}
	return args, err
}

// decodeReply decodes one whole message holding one reply.
func decodeReply(b []byte) (Reply, error) {
	r := bufio.NewReader(strings.NewReader(string(b)))
	rep, err := ReadReply(r)
	if err == nil && r.Buffered() != 0 {
		err = fmt.Errorf("redis: %d bytes after the reply", r.Buffered())
	}
	return rep, err
}
